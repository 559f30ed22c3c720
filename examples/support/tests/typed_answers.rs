//! `support serve`'s publishing graph over HTTP: each pause site publishes its answer's type and
//! JSON Schema, an answer of the wrong shape for a site is a 400 naming the site and the type
//! (and the run still waits), and each question takes its own type.

mod common;

use std::path::Path;

use common::serve;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_question_is_answered_over_http_with_its_own_type() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("support-typed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let db = dir.join("runs.db");
    let _ = std::fs::remove_file(&db);
    let (mut server, url) = serve(&db, 0);
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        async move {
            client
                .get(path)
                .send()
                .await
                .expect("the server answers")
                .json::<Value>()
                .await
                .expect("JSON")
        }
    };

    let schemas = get(format!("{url}/assistants/Publish/schemas")).await;
    let sites = &schemas["answer_sites"];
    assert_eq!(
        sites["assign"]["asks"]["type"], "support::posts::Reviewer",
        "{sites}"
    );
    assert_eq!(
        sites["assign"]["asks"]["schema"]["required"],
        json!(["name"])
    );
    assert!(
        sites["publish"]["interrupt"]["type"]
            .as_str()
            .is_some_and(|ty| ty.ends_with("::Decision")),
        "{sites}"
    );
    // The `Scheduling` subgraph's question, by the path of nodes down to it.
    assert_eq!(
        sites["schedule/pick"]["asks"]["type"], "support::posts::Slot",
        "{sites}"
    );

    let created: Value = client
        .post(format!("{url}/runs"))
        .json(&json!({"graph": "Publish", "input": {"text": "hello"}}))
        .send()
        .await
        .expect("created")
        .json()
        .await
        .expect("JSON");
    let run_id = created["run_id"].as_str().expect("a run id").to_owned();
    let run = get(format!("{url}/runs/{run_id}/wait?timeout=60")).await;
    assert_eq!(run["status"], "paused", "{run}");
    let asked = run["interrupts"][0]["id"].clone();
    assert_eq!(
        run["interrupts"][0]["request"]["payload"],
        json!({"names": ["ada", "grace"]})
    );

    // A decision where a reviewer is asked for: a 400 naming the site and its type.
    let refused = client
        .post(format!("{url}/runs/{run_id}/resume"))
        .json(&json!({"answer": "approve", "interrupt_id": asked}))
        .send()
        .await
        .expect("refused");
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().await.expect("JSON");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("assign@1")
            && message.contains("Reviewer")
            && message.contains("`assign`"),
        "{message}"
    );
    let still = get(format!("{url}/runs/{run_id}")).await;
    assert_eq!(still["status"], "paused", "the run still waits: {still}");

    // Each answer of its question's own type; the next question (or the end) follows.
    for (answer, asked, next) in [
        (json!({"name": "grace"}), "assign", Some("schedule")),
        (json!("tonight"), "schedule", Some("publish")),
        (json!("approve"), "publish", None),
    ] {
        let run = get(format!("{url}/runs/{run_id}")).await;
        assert_eq!(run["interrupts"][0]["node"], asked, "{run}");
        if asked == "schedule" {
            // The subgraph's question is read by its own site's type: a 400 naming its node.
            let refused = client
                .post(format!("{url}/runs/{run_id}/resume"))
                .json(&json!({"answer": "someday", "interrupt_id": run["interrupts"][0]["id"]}))
                .send()
                .await
                .expect("answered");
            assert_eq!(refused.status().as_u16(), 400);
            let message = refused.text().await.expect("a body");
            assert!(
                message.contains("/pick@")
                    && message.contains("Slot")
                    && message.contains("`pick`"),
                "{message}"
            );
        }
        let answered = client
            .post(format!("{url}/runs/{run_id}/resume"))
            .json(&json!({"answer": answer, "interrupt_id": run["interrupts"][0]["id"]}))
            .send()
            .await
            .expect("answered");
        assert_eq!(answered.status().as_u16(), 200);
        let settled = |run: &Value| match next {
            Some(node) => run["status"] == "paused" && run["interrupts"][0]["node"] == node,
            None => run["status"] == "completed",
        };
        let mut run = get(format!("{url}/runs/{run_id}/wait?timeout=60")).await;
        for _ in 0..100 {
            if settled(&run) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            run = get(format!("{url}/runs/{run_id}")).await;
        }
        assert!(settled(&run), "after `{asked}`: {run}");
    }
    let done = get(format!("{url}/runs/{run_id}")).await;
    assert_eq!(done["state"]["published"], true, "{done}");
    assert_eq!(done["state"]["review"], "grace read it", "{done}");
    assert_eq!(done["state"]["slot"], "tonight", "{done}");
    server.kill();
    let _ = std::fs::remove_dir_all(&dir);
}
