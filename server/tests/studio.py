#!/usr/bin/env python3
"""The studio in a real browser (headless Chromium, driven by Selenium; both Debian packages).

Run against a server of the support example (`.ci/run` starts one), which serves the ticket
flow (`Support`) and the support chat (`Chat`, with its `Lookup` subgraph):

    python3 server/tests/studio.py http://127.0.0.1:PORT SHOTS_DIR

In a 1280×800 window it:
- sees the support graph drawn, starts a run from the form made from its input schema, sees
  it pause with its question on screen without scrolling, approves it, sees it complete and
  its event stream end;
- opens that run's link in a new page load; travels in time: edits the draft at a checkpoint
  and forks (the fork pauses with the edited draft), replays from an earlier checkpoint;
- cancels the replay, sees it cancelled and its stream not rejoined, and retries it (it asks
  its question again);
- lists the threads and opens one: its runs as a conversation;
- chats: starts the chat graph with a message, sees its subgraph run under it in the list and
  in the run, opens the subgraph run, and continues the thread with a second message;
- sees a run started by another client appear in the list within 2.5 s (the server's `changes`
  stream; the page's own look is every 5 s);
- publishes a post (`Publish`): its three questions have answer types of their own; the first
  (who reviews it) shows its candidates and a form of a `Reviewer`'s fields, the second (when)
  a button per `Slot`, the third (publish it?) the approve and reject buttons of a `Decision`.
A screenshot of each state goes into SHOTS_DIR. It prints `studio: N passed, N failed` and
exits non-zero when a step failed.
"""

import json
import os
import re
import sys
import time
import traceback
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def main(url, shots):
    os.makedirs(shots, exist_ok=True)
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # A list rebuilt under a wait is looked at again, not a failure.
    wait = WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,))
    by_id = lambda name: driver.find_element(By.ID, name)
    shot = lambda name: driver.save_screenshot(os.path.join(shots, name + ".png"))
    status = lambda: by_id("run-status").text
    hash_of = lambda: driver.execute_script("return location.hash")
    shown_run = lambda: by_id("run-id").text
    year = time.strftime("%Y")

    def choose_graph(name):
        Select(by_id("graphs")).select_by_value(name)
        wait.until(lambda d: name in by_id("graph").get_attribute("innerHTML") or True)
        wait.until(lambda d: d.execute_script("return graph && graph.name") == name)

    def on_screen(element_id):
        """Whether the element is in the window with the page scrolled to its top."""
        return driver.execute_script(
            "window.scrollTo(0, 0);"
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight",
            element_id)

    def pick_checkpoint(pattern):
        """Selects the timeline's checkpoint whose text matches `pattern` (read and clicked in
        the page: the timeline is drawn again with each refresh)."""
        items = lambda: driver.execute_script(
            "return [...document.querySelectorAll('#timeline li')].map(li => [li.textContent, li.className])")
        for index, (text, _) in enumerate(items()):
            if re.search(pattern, text):
                driver.execute_script("document.querySelectorAll('#timeline li')[arguments[0]].click()", index)
                wait.until(lambda d: any(re.search(pattern, t) and c == "selected" for t, c in items()))
                return
        raise AssertionError(f"no checkpoint matches {pattern!r}: {by_id('timeline').text}")

    try:
        driver.get(url)
        # The graphs are listed; the support graph, drawn by Mermaid, names its nodes.
        wait.until(lambda d: by_id("graph").find_elements(By.TAG_NAME, "svg"))
        graphs = [o.get_attribute("value") for o in by_id("graphs").find_elements(By.TAG_NAME, "option")]
        assert graphs == ["Chat", "Publish", "Support"], graphs
        choose_graph("Support")
        wait.until(lambda d: "lookup_invoice" in by_id("graph").get_attribute("innerHTML"))
        drawing = by_id("graph").get_attribute("innerHTML")
        for node in ("classify", "lookup_invoice", "draft", "review", "send"):
            assert node in drawing, f"the drawing has no `{node}`"
        # The start form comes from the input schema: a field per state field, none of `{}`.
        labels = [l.text for l in by_id("start-form").find_elements(By.TAG_NAME, "label")]
        for field in ("text", "category", "drafts", "sent"):
            assert field in labels, labels
        shot("1-graph")

        # A run from the form: it pauses, its question on screen without scrolling.
        by_id("start-form-text").send_keys("I was charged twice for my invoice")
        by_id("start").click()
        wait.until(lambda d: "run=" in hash_of() and status() in ("running", "paused"))
        first = shown_run()
        assert hash_of().endswith("run=" + first), hash_of()
        wait.until(lambda d: status() == "paused")
        question = by_id("question-text").text
        assert "Send this reply to the customer?" in question, question
        assert on_screen("question"), "the question is below the fold at 1280×800"
        assert on_screen("approve"), "the Approve button is below the fold at 1280×800"
        assert "lookup_invoice" in by_id("timeline").text, by_id("timeline").text
        # Times come with their dates.
        assert year in by_id("timeline").text and year in by_id("run-meta").text, by_id("run-meta").text
        assert "refunded the duplicate charge" in by_id("state").text
        # The run is on a thread of its own, linked; the drawing marks where it waits.
        thread_link = driver.execute_script("return document.querySelector('#run-meta a[href*=\"thread=\"]').href")
        current = driver.find_elements(By.CSS_SELECTOR, "#graph g.node.current")
        ids = [n.get_attribute("id") for n in current]
        assert len(ids) == 1 and "-n_send-" in ids[0], ids
        shot("2-paused")

        by_id("approve").click()
        wait.until(lambda d: status() == "completed")
        assert by_id("question").get_attribute("hidden") is not None, "the question is gone"
        assert '"sent": [' in by_id("state").text, by_id("state").text
        row = driver.find_element(By.CSS_SELECTOR, "tr.selected")
        assert "completed" in row.text and year in row.text, row.text
        # The stream's last event says the run ended; the page closes it rather than rejoin.
        wait.until(lambda d: "ended: completed" in by_id("events").text)
        wait.until(lambda d: d.execute_script("return stream === null"))
        shot("3-completed")

        # The run's link, opened afresh, shows it.
        driver.get(url + "#run=" + first)
        wait.until(lambda d: by_id("run-id").text == first and status() == "completed")
        assert by_id("graphs").get_attribute("value") == "Support"

        # Time travel: the draft edited where the run waited before `send`, then a fork.
        pick_checkpoint(r"^pause:before · step 4 · review")
        assert "at checkpoint 5" in by_id("state-at").get_attribute("textContent")
        by_id("edit").click()
        wait.until(lambda d: by_id("editor").get_attribute("hidden") is None)
        draft = by_id("edit-form-draft")
        assert "refunded the duplicate charge" in draft.get_attribute("value")
        draft.clear()
        draft.send_keys("Hello, we refunded the duplicate charge. (edited in the studio)")
        shot("4-editing")
        by_id("fork").click()
        wait.until(lambda d: shown_run() not in ("", first) and status() == "paused")
        fork = shown_run()
        assert "forked from" in by_id("run-meta").text, by_id("run-meta").text
        assert "(edited in the studio)" in by_id("state").text, by_id("state").text
        by_id("approve").click()
        wait.until(lambda d: status() == "completed")
        assert "(edited in the studio)\"\n  ]" in by_id("state").text or \
            '"sent": [\n    "Hello, we refunded the duplicate charge. (edited in the studio)"' in by_id("state").text, \
            by_id("state").text
        shot("5-forked")

        # Replay from before the draft: the graph drafts again and asks again.
        driver.get(url + "#run=" + first)
        wait.until(lambda d: shown_run() == first and status() == "completed")
        pick_checkpoint(r"^step · step 2 · lookup_invoice")
        by_id("replay").click()
        wait.until(lambda d: shown_run() not in ("", first, fork) and status() == "paused")
        replay = shown_run()
        assert "draft" in by_id("timeline").text and "Send this reply" in by_id("question-text").text

        # Cancelled, it stays so (the stream ends and is not rejoined); retried, it asks again.
        by_id("cancel").click()
        wait.until(lambda d: status() == "cancelled")
        wait.until(lambda d: "ended: cancelled" in by_id("events").text)
        assert by_id("cancel").get_attribute("hidden") is not None, "nothing left to cancel"
        assert "cancelled by a request to the server" in by_id("run-error").text
        row = driver.find_element(By.CSS_SELECTOR, "tr.selected")
        assert "cancelled" in row.text, row.text
        time.sleep(7)  # several of the browser's retry periods
        ends = by_id("events").text.count("ended:")
        assert ends == 1, by_id("events").text
        assert driver.execute_script("return stream === null")
        shot("6-cancelled")
        by_id("retry").click()
        wait.until(lambda d: status() == "paused" and shown_run() == replay)
        assert "Send this reply" in by_id("question-text").text
        assert by_id("retry").get_attribute("hidden") is not None
        shot("7-retried")

        # The thread of the first run: its runs, oldest first, as a conversation.
        driver.get(thread_link)
        wait.until(lambda d: by_id("thread").get_attribute("hidden") is None and by_id("chat").text)
        assert by_id("threads-list").get_attribute("hidden") is None, "the threads are listed"
        chat = by_id("chat").text
        assert first[-8:] in chat and "draft:" in chat and "sent:" in chat, chat
        assert year in by_id("thread-meta").text
        assert driver.find_elements(By.CSS_SELECTOR, "#threads tr.selected"), "the thread is picked in the list"
        shot("8-thread")

        # The chat: a message starts it; its subgraph run shows under it.
        choose_graph("Chat")
        wait.until(lambda d: d.find_elements(By.ID, "start-form-messages"))
        by_id("start-form-messages").send_keys("I was charged twice on my invoice")
        by_id("start").click()
        wait.until(lambda d: "run=" in hash_of() and shown_run() and status() == "completed")
        chat_run = shown_run()
        wait.until(lambda d: by_id("children-box").get_attribute("hidden") is None)
        assert "lookup@2 · Lookup" in by_id("children").text, by_id("children").text
        # The list is rebuilt when runs are written: its row is read whole, in the page.
        child_row = wait.until(lambda d: d.execute_script(
            "const row = document.querySelector('#runs tr.child'); return row && row.innerText;"))
        assert "lookup@2 · Lookup" in child_row and "completed" in child_row, child_row
        assert "was refunded" in by_id("state").text
        shot("9-chat-run")
        by_id("children").find_element(By.TAG_NAME, "a").click()
        wait.until(lambda d: shown_run() == chat_run + "/lookup@2")
        assert "a subgraph run of" in by_id("run-meta").text, by_id("run-meta").text
        assert "check_refund" in by_id("timeline").text

        # The chat's thread, continued: the conversation grows on it.
        driver.get(url + "#run=" + chat_run)
        wait.until(lambda d: shown_run() == chat_run)
        driver.get(driver.execute_script("return document.querySelector('#run-meta a[href*=\"thread=\"]').href"))
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chat .bubble")) == 2)
        by_id("continue-form-messages").send_keys("Thank you! When will I see it?")
        by_id("continue").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chat .bubble")) == 4
                   and "completed" in by_id("chat").text.split("\n")[-3:][0] + by_id("chat").text)
        wait.until(lambda d: "Message 2 of this conversation" in by_id("chat").text)
        bubbles = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "#chat .bubble")]
        assert bubbles[0] == "I was charged twice on my invoice" and "was refunded" in bubbles[1], bubbles
        assert bubbles[2] == "Thank you! When will I see it?", bubbles
        users = driver.find_elements(By.CSS_SELECTOR, "#chat li.user")
        assert len(users) == 2, [u.text for u in users]
        shot("10-chat-thread")

        # A run started by another client shows in the list as soon as it is written: the
        # server's `changes` stream says so, well before the page's own look every 5 s.
        driver.get(url)
        choose_graph("Support")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#runs tr"))
        request = urllib.request.Request(
            url.rstrip("/") + "/runs",
            data=json.dumps({"graph": "Support", "input": {"text": "Where is my parcel?"}}).encode(),
            headers={"content-type": "application/json"},
            method="POST")
        other = json.load(urllib.request.urlopen(request))["run_id"]
        WebDriverWait(driver, 2.5, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, f'#runs tr[data-run="{other}"]'))
        driver.execute_script(
            "document.querySelector(arguments[0]).scrollIntoView()", f'#runs tr[data-run="{other}"]')
        shot("11-live-list")

        # Two differently typed questions: a reviewer from a form of its fields, then a decision.
        choose_graph("Publish")
        wait.until(lambda d: d.find_elements(By.ID, "start-form-text"))
        by_id("start-form-text").send_keys("Trellis checks answers at compile time")
        by_id("start").click()
        wait.until(lambda d: "run=" in hash_of() and status() == "paused")
        assert "Who reviews this post?" in by_id("question-text").text, by_id("question-text").text
        assert '"grace"' in by_id("question-payload").text, by_id("question-payload").text
        assert not by_id("approve").is_displayed(), "a reviewer is no decision: no Approve button"
        assert "answered with Reviewer" in by_id("typed-answer-type").text
        labels = [l.text for l in by_id("typed-form").find_elements(By.TAG_NAME, "label")]
        assert labels == ["name", "note"], labels
        by_id("typed-form-name").send_keys("grace")
        driver.execute_script("document.getElementById('question').scrollIntoView()")
        shot("12-typed-question")
        by_id("send-typed").click()
        # An enum: a button per choice, and no form.
        wait.until(lambda d: status() == "paused" and "When does it go out?" in by_id("question-text").text)
        choices = [b.text for b in by_id("typed-choices").find_elements(By.TAG_NAME, "button")]
        assert choices == ["now", "tonight", "tomorrow"], choices
        assert not by_id("send-typed").is_displayed() and not by_id("approve").is_displayed()
        driver.execute_script("document.getElementById('question').scrollIntoView()")
        shot("13-typed-choice")
        by_id("typed-choices").find_elements(By.TAG_NAME, "button")[1].click()
        wait.until(lambda d: status() == "paused" and "Publish this post?" in by_id("question-text").text)
        assert by_id("approve").is_displayed() and by_id("reject").is_displayed(), "a decision gets its buttons"
        assert not by_id("send-typed").is_displayed()
        assert '"name": "grace"' in by_id("state").text, by_id("state").text
        driver.execute_script("document.getElementById('question').scrollIntoView()")
        shot("14-typed-decision")
        by_id("approve").click()
        wait.until(lambda d: status() == "completed")
        assert '"published": true' in by_id("state").text, by_id("state").text
        assert '"review": "grace read it"' in by_id("state").text, by_id("state").text
        assert '"slot": "tonight"' in by_id("state").text, by_id("state").text
        shot("15-published")
        print("studio: 1 passed, 0 failed")
        return 0
    except Exception:  # noqa: BLE001 - any failure is reported with a screenshot
        traceback.print_exc()
        shot("failure")
        print("notice:", driver.find_element(By.ID, "notice").text)
        print("studio: 0 passed, 1 failed")
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
