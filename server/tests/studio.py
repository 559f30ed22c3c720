#!/usr/bin/env python3
"""The studio in a real browser (headless Chromium, driven by Selenium; both Debian packages).

Run against a server of the support example (`.ci/run` starts one):

    python3 server/tests/studio.py http://127.0.0.1:PORT SHOTS_DIR

It opens the page, sees the support graph drawn, starts a run, sees it pause at its question,
clicks Approve and sees the run complete; then starts another, cancels it at its question and
sees it cancelled, its event stream ended and not rejoined; a screenshot of each state goes
into SHOTS_DIR.
It prints `studio: N passed, N failed` and exits non-zero when a step failed.
"""

import os
import sys
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main(url, shots):
    os.makedirs(shots, exist_ok=True)
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1100"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    wait = WebDriverWait(driver, 30)
    by_id = lambda name: driver.find_element(By.ID, name)
    shot = lambda name: driver.save_screenshot(os.path.join(shots, name + ".png"))
    try:
        driver.get(url)
        # The support graph, drawn by Mermaid: an SVG naming its nodes.
        wait.until(lambda d: by_id("graph").find_elements(By.TAG_NAME, "svg"))
        drawing = by_id("graph").get_attribute("innerHTML")
        for node in ("classify", "lookup_invoice", "draft", "review", "send"):
            assert node in drawing, f"the drawing has no `{node}`"
        assert by_id("graphs").get_attribute("value") == "Support"
        shot("1-graph")

        text = by_id("input")
        text.clear()
        text.send_keys('{"text": "I was charged twice for my invoice"}')
        by_id("start").click()
        wait.until(lambda d: by_id("run-status").text == "running" or by_id("run-status").text == "paused")
        shot("2-running")
        wait.until(lambda d: by_id("run-status").text == "paused")
        question = by_id("question-text").text
        assert "Send this reply to the customer?" in question, question
        assert "lookup_invoice" in by_id("timeline").text, by_id("timeline").text
        assert "refunded the duplicate charge" in by_id("state").text
        # The drawing marks where the run waits: before `send`.
        current = driver.find_elements(By.CSS_SELECTOR, "#graph g.node.current")
        ids = [n.get_attribute("id") for n in current]
        assert len(ids) == 1 and "-n_send-" in ids[0], ids
        shot("3-paused")

        by_id("approve").click()
        wait.until(lambda d: by_id("run-status").text == "completed")
        wait.until(lambda d: "complete" in by_id("events").text)
        assert by_id("question").get_attribute("hidden") is not None, "the question is gone"
        assert '"sent": [' in by_id("state").text, by_id("state").text
        row = driver.find_element(By.CSS_SELECTOR, "tr.run.selected")
        assert "completed" in row.text, row.text
        # The stream's last event says the run ended; the page closes it rather than rejoin.
        wait.until(lambda d: "ended: completed" in by_id("events").text)
        wait.until(lambda d: d.execute_script("return stream === null"))
        shot("4-completed")

        text = by_id("input")
        text.clear()
        text.send_keys('{"text": "Where is my parcel?"}')
        by_id("start").click()
        wait.until(lambda d: by_id("run-status").text == "paused")
        by_id("cancel").click()
        wait.until(lambda d: by_id("run-status").text == "cancelled")
        wait.until(lambda d: "ended: cancelled" in by_id("events").text)
        assert by_id("cancel").get_attribute("hidden") is not None, "nothing left to cancel"
        assert "cancelled by a request to the server" in by_id("run-error").text
        row = driver.find_element(By.CSS_SELECTOR, "tr.run.selected")
        assert "cancelled" in row.text, row.text
        # An ended stream is not rejoined: after several of the browser's retry periods, the
        # end is still shown once and no stream is open.
        import time
        time.sleep(7)
        ends = by_id("events").text.count("ended:")
        assert ends == 1, by_id("events").text
        assert driver.execute_script("return stream === null")
        shot("5-cancelled")
        print("studio: 1 passed, 0 failed")
        return 0
    except Exception:  # noqa: BLE001 - any failure is reported with a screenshot
        traceback.print_exc()
        shot("failure")
        print("studio: 0 passed, 1 failed")
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
