//! The server's doors: a request naming another host (DNS rebinding), a page of another origin,
//! a form or `text/plain` body that changes something, a token in the address of anything but
//! an event stream, and an answer that would land on a question it was not meant for — each
//! refused, with nothing written.

mod common;

use std::sync::Arc;

use common::{Client, serve};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use trellis::checkpoint::{InMemoryCheckpointer, RunQueue};
use trellis::interrupt::Decision;
use trellis::{END, GraphBuilder, GraphState, NodeOptions, START};
use trellis_server::{Running, ServeOptions, Server};

fn store() -> Arc<dyn RunQueue> {
    Arc::new(InMemoryCheckpointer::new())
}

/// One HTTP/1.1 request written by hand, so that `Host` and every header are what the test
/// says (an HTTP client would fill them in): (status, JSON body or null).
async fn raw(
    running: &Running,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(running.local_addr())
        .await
        .expect("connects");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("reads");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_is_not_the_server_s_is_refused() {
    let running = serve(store(), ServeOptions::default()).await;
    let port = running.local_addr().port();
    let own = format!("127.0.0.1:{port}");
    let local = format!("localhost:{port}");
    let rebound = format!("evil.example:{port}");
    for (host, expected) in [
        (own.as_str(), 200),
        (local.as_str(), 200),
        (rebound.as_str(), 403),
    ] {
        let (status, body) = raw(&running, "GET", "/runs", &[("Host", host)], "").await;
        assert_eq!(status, expected, "{host}: {body}");
    }
    // The studio's page too: the rebound page would load it and drive it.
    let (status, body) = raw(&running, "GET", "/", &[("Host", &rebound)], "").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "forbidden");
    assert_eq!(
        body["error"]["message"],
        format!(
            "host `{rebound}` is not this server's: name `{own}` or `localhost:{port}` (or allow another name with `--allow-host`)"
        )
    );
    let (status, _) = raw(&running, "GET", "/runs", &[], "").await;
    assert_eq!(status, 403, "no host at all");
    running.shutdown().await;

    let running = serve(
        store(),
        ServeOptions {
            allowed_hosts: vec!["Studio.Internal".into()],
            ..ServeOptions::default()
        },
    )
    .await;
    let (status, body) = raw(&running, "GET", "/runs", &[("Host", "studio.internal")], "").await;
    assert_eq!(status, 200, "an allowed name: {body}");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_site_cannot_cancel_a_run_with_a_simple_post() {
    let running = serve(store(), ServeOptions::default()).await;
    let client = Client::new(&running);
    let host = running.local_addr().to_string();
    let run_id = client.paused_job().await;
    let cancel = format!("/runs/{run_id}/cancel");

    // A form or a `text/plain` fetch from another site: refused for its origin.
    let (status, body) = raw(
        &running,
        "POST",
        &cancel,
        &[
            ("Host", &host),
            ("Origin", "http://evil.example"),
            ("Content-Type", "text/plain"),
        ],
        "",
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "origin `http://evil.example` may not call this server: only its own pages may (allow another origin with `--allow-origin`)"
    );
    // The same bodies without an origin (a browser that left it out): refused for their type.
    for kind in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (status, body) = raw(
            &running,
            "POST",
            &cancel,
            &[("Host", &host), ("Content-Type", kind)],
            "",
        )
        .await;
        assert_eq!(status, 415, "{kind}: {body}");
        assert_eq!(body["error"]["code"], "unsupported_media_type");
    }
    let (status, body) = raw(
        &running,
        "POST",
        "/runs",
        &[("Host", &host), ("Content-Type", "text/plain")],
        r#"{"graph": "Jobs", "input": {}}"#,
    )
    .await;
    assert_eq!(status, 415, "{body}");
    let (_, run) = client.get(&format!("/runs/{run_id}")).await;
    assert_eq!(run["status"], "paused", "nothing was cancelled");
    let (_, runs) = client.get("/runs").await;
    assert_eq!(
        runs.as_array().map(Vec::len),
        Some(1),
        "nothing was created"
    );

    // The server's own page (the studio) may, with JSON.
    let own = format!("http://{host}");
    let (status, body) = raw(
        &running,
        "POST",
        &cancel,
        &[
            ("Host", &host),
            ("Origin", &own),
            ("Content-Type", "application/json"),
        ],
        "{}",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "cancelled");
    running.shutdown().await;

    // An origin allowed by the server: its pages may call.
    let running = serve(
        store(),
        ServeOptions {
            allowed_origins: vec!["https://app.example/".into()],
            ..ServeOptions::default()
        },
    )
    .await;
    let host = running.local_addr().to_string();
    let (status, body) = raw(
        &running,
        "GET",
        "/graphs",
        &[("Host", &host), ("Origin", "https://app.example")],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = raw(
        &running,
        "GET",
        "/graphs",
        &[("Host", &host), ("Origin", "null")],
        "",
    )
    .await;
    assert_eq!(status, 403, "a sandboxed page's origin");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_allowed_hosts_and_origins_are_refused_at_start() {
    for (hosts, origins, message) in [
        (
            vec!["a b"],
            vec![],
            "`a b` is not a host name to allow: give `name` or `name:port`",
        ),
        (
            vec![],
            vec!["app.example"],
            "`app.example` is not an origin to allow: give `http://name[:port]` or `https://name[:port]`",
        ),
    ] {
        let refused = Server::builder(store())
            .build()
            .expect("builds")
            .serve(ServeOptions {
                addr: "127.0.0.1:0".parse().expect("addr"),
                allowed_hosts: hosts.into_iter().map(str::to_owned).collect(),
                allowed_origins: origins.into_iter().map(str::to_owned).collect(),
                ..ServeOptions::default()
            })
            .await
            .err()
            .expect("refused");
        assert_eq!(refused.to_string(), message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_goes_in_the_header_and_in_the_address_only_for_event_streams() {
    let running = serve(
        store(),
        ServeOptions {
            token: Some("s3cret".into()),
            ..ServeOptions::default()
        },
    )
    .await;
    let host = running.local_addr().to_string();
    let (status, _) = raw(
        &running,
        "GET",
        "/graphs?access_token=s3cret",
        &[("Host", &host)],
        "",
    )
    .await;
    assert_eq!(status, 401, "not in the address of a plain request");
    let (status, _) = raw(
        &running,
        "POST",
        "/runs?access_token=s3cret",
        &[("Host", &host), ("Content-Type", "application/json")],
        r#"{"graph": "Jobs", "input": {}}"#,
    )
    .await;
    assert_eq!(status, 401, "nor of one that changes something");
    let (status, body) = raw(
        &running,
        "GET",
        "/graphs",
        &[("Host", &host), ("Authorization", "Bearer s3cret")],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // An event stream (a browser's `EventSource` sends no headers): the address may carry it.
    let (status, body) = raw(
        &running,
        "POST",
        "/runs",
        &[
            ("Host", &host),
            ("Authorization", "Bearer s3cret"),
            ("Content-Type", "application/json"),
        ],
        r#"{"graph": "Jobs", "input": {}}"#,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let run_id = body["run_id"].as_str().expect("an id");
    let (status, _) = raw(
        &running,
        "GET",
        &format!("/runs/{run_id}/stream?access_token=s3cret"),
        &[("Host", &host)],
        "",
    )
    .await;
    assert_eq!(status, 200);
    running.shutdown().await;
}

/// Two questions, one after the other.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, GraphState)]
#[serde(default)]
struct Twice {
    #[reducer(append)]
    said: Vec<String>,
    #[answer]
    decision: Option<Decision>,
}

fn twice() -> trellis::CompiledGraph<Twice> {
    let mut graph = GraphBuilder::<Twice>::new("Twice");
    for node in ["first", "second"] {
        graph.add_node_fn_with(
            node,
            move |state: std::sync::Arc<Twice>, _| async move {
                let said = match &state.decision {
                    Some(Decision::Approve) => format!("{node}: approved"),
                    Some(Decision::Reject { reason }) => format!("{node}: {reason}"),
                    None => format!("{node}: unanswered"),
                };
                Ok(TwiceUpdate::default().said(said).into())
            },
            NodeOptions::new().interrupt_before(),
        );
    }
    graph
        .add_edge(START, "first")
        .add_edge("first", "second")
        .add_edge("second", END);
    graph.compile().expect("compiles")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_lands_only_on_the_question_it_names() {
    let running = Server::builder(store())
        .graph(twice())
        .build()
        .expect("builds")
        .serve(ServeOptions {
            addr: "127.0.0.1:0".parse().expect("addr"),
            ..ServeOptions::default()
        })
        .await
        .expect("listens");
    let client = Client::new(&running);
    let (status, run) = client
        .post("/runs", &json!({"graph": "Twice", "input": {}}))
        .await;
    assert_eq!(status, 201, "{run}");
    let run_id = run["run_id"].as_str().expect("an id").to_owned();
    let paused = client.settle(&run_id).await;
    let first = paused["interrupts"][0]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert!(first.starts_with("first@"), "{first}");
    let resume = format!("/runs/{run_id}/resume");

    // Without saying which question: refused, naming it.
    let (status, body) = client.post(&resume, &json!({"answer": "approve"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        format!(
            "say which question `answer` answers: `interrupt_id`, one of the run's `interrupts` (`{first}`)"
        )
    );

    // An approve and a reject of the first question, sent at once: one answers it; the other
    // finds it answered and must not answer the second.
    let approve = json!({"answer": "approve", "interrupt_id": first});
    let reject = json!({"answer": {"reject": {"reason": "no"}}, "interrupt_id": first});
    let (a, b) = tokio::join!(
        client.post(&resume, &approve),
        client.post(&resume, &reject)
    );
    let statuses = [a.0, b.0];
    assert!(statuses.contains(&200), "one answered: {a:?} {b:?}");
    let late = if a.0 == 200 { &b } else { &a };
    assert_eq!(late.0, 409, "{late:?}");
    let at_second = client.settle(&run_id).await;
    assert_eq!(at_second["status"], "paused", "{at_second}");
    let second = at_second["interrupts"][0]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert!(second.starts_with("second@"), "{second}");
    assert_eq!(at_second["state"]["said"].as_array().map(Vec::len), Some(1));

    // Sent again after the run moved on: a 409 naming the question asked now.
    let (status, body) = client.post(&resume, &approve).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"]["message"],
        format!(
            "run {run_id} does not ask `{first}` (now it asks `{second}`): nothing was answered"
        )
    );
    let (_, still) = client.get(&format!("/runs/{run_id}")).await;
    assert_eq!(still["status"], "paused");
    assert_eq!(still["interrupts"][0]["id"], second.as_str());

    let (status, body) = client
        .post(
            &resume,
            &json!({"answer": "approve", "interrupt_id": second}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(client.settle(&run_id).await["status"], "completed");
    running.shutdown().await;
}
