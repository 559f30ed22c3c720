//! The blueprint's JSON shape (LANGUAGE.md §6, `"format": 1`): serde's derive on the
//! blueprint's own types where the shape is theirs (kinds, interrupt points, meta values), and on
//! a wire form of a graph, a node and an edge where the shape is flatter than the data (`retry`
//! and `backoff_ms` side by side, `to` or `targets` by the edge's kind).
//!
//! `entry` and `finish` are derived from the edges when writing and ignored when reading; keys a
//! newer writer adds are skipped.

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::blueprint::{
    Asks, Blueprint, Edge, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind, Retry,
    RetryOn,
};

/// The version of the JSON shape; bumped on any incompatible change.
pub const JSON_FORMAT: u32 = 1;

impl Serialize for Blueprint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        GraphOut {
            format: JSON_FORMAT,
            name: &self.name,
            doc: &self.doc,
            state: &self.state,
            max_steps: self.max_steps,
            entry: self.entry().map(Endpoint::as_str),
            finish: self.finish().collect(),
            nodes: &self.nodes,
            edges: &self.edges,
        }
        .serialize(serializer)
    }
}

/// A graph as written, borrowed from the blueprint.
#[derive(Serialize)]
struct GraphOut<'a> {
    format: u32,
    name: &'a str,
    doc: &'a Option<String>,
    state: &'a Option<String>,
    max_steps: Option<u32>,
    entry: Option<&'a str>,
    finish: Vec<&'a str>,
    nodes: &'a [Node],
    edges: &'a [Edge],
}

/// A graph as read.
#[derive(Deserialize)]
pub(crate) struct GraphIn {
    format: Format,
    name: String,
    doc: Option<String>,
    state: Option<String>,
    max_steps: Option<u32>,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl From<GraphIn> for Blueprint {
    fn from(graph: GraphIn) -> Blueprint {
        // The format was checked as it was read.
        let GraphIn {
            format: Format,
            name,
            doc,
            state,
            max_steps,
            nodes,
            edges,
        } = graph;
        Blueprint {
            name,
            doc,
            state,
            max_steps,
            nodes,
            edges,
        }
    }
}

/// `"format": 1`, refused as soon as it is read when it is another.
struct Format;

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u32::deserialize(deserializer)? {
            JSON_FORMAT => Ok(Format),
            other => Err(de::Error::custom(format!(
                "blueprint format {other} is not supported (this version reads format {JSON_FORMAT})"
            ))),
        }
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        NodeOut {
            id: &self.id,
            doc: &self.doc,
            kind: &self.kind,
            retry: self.retry.map(|retry| retry.retries),
            backoff_ms: self.retry.and_then(|retry| retry.backoff_ms),
            max_backoff_ms: self.retry.and_then(|retry| retry.max_backoff_ms),
            jitter: self.retry.is_some_and(|retry| retry.jitter),
            retry_on: self
                .retry
                .map(|retry| retry.on)
                .filter(|on| *on != RetryOn::default())
                .map(|on| on.names().collect()),
            timeout_ms: self.timeout_ms,
            max_visits: self.max_visits,
            interrupt: self.interrupt,
            question: &self.question,
            defer: self.defer,
            on_error: &self.on_error,
            meta: &self.meta,
            max_concurrency: self.max_concurrency,
            input: &self.input,
            graph: &self.graph,
            writes: &self.writes,
            answer: &self.answer,
            asks: &self.asks,
        }
        .serialize(serializer)
    }
}

/// A node as written, borrowed from the blueprint. The keys added since format 1 was first
/// written (a retry's `max_backoff_ms`, `jitter` and `retry_on`; the last four) are written
/// only when set, so that the export of a graph without them is unchanged.
#[derive(Serialize)]
struct NodeOut<'a> {
    id: &'a str,
    doc: &'a Option<String>,
    kind: &'a Option<NodeKind>,
    retry: Option<u32>,
    backoff_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_backoff_ms: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    jitter: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_on: Option<Vec<&'static str>>,
    timeout_ms: Option<u64>,
    max_visits: Option<u32>,
    interrupt: Option<InterruptPoint>,
    question: &'a Option<String>,
    defer: bool,
    on_error: &'a Option<String>,
    #[serde(serialize_with = "meta_out")]
    meta: &'a [(String, MetaValue)],
    #[serde(skip_serializing_if = "Option::is_none")]
    max_concurrency: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    graph: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    writes: &'a Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    asks: &'a Option<Asks>,
}

/// A node as read: a missing or null key is unset.
#[derive(Deserialize)]
pub(crate) struct NodeIn {
    id: String,
    doc: Option<String>,
    kind: Option<NodeKind>,
    retry: Option<u32>,
    backoff_ms: Option<u64>,
    max_backoff_ms: Option<u64>,
    jitter: Option<bool>,
    retry_on: Option<Failures>,
    timeout_ms: Option<u64>,
    max_visits: Option<u32>,
    interrupt: Option<Pause>,
    question: Option<String>,
    defer: Option<bool>,
    on_error: Option<String>,
    #[serde(default, deserialize_with = "meta_in")]
    meta: Vec<(String, MetaValue)>,
    max_concurrency: Option<u32>,
    input: Option<String>,
    graph: Option<String>,
    writes: Option<Vec<String>>,
    answer: Option<String>,
    asks: Option<Asks>,
}

/// The failures `retry_on` names, read by the names `RetryOn` knows.
#[derive(Deserialize)]
#[serde(try_from = "Vec<String>")]
struct Failures(RetryOn);

impl TryFrom<Vec<String>> for Failures {
    type Error = String;

    fn try_from(names: Vec<String>) -> Result<Self, String> {
        names
            .iter()
            .try_fold(RetryOn::NONE, |on, name| {
                on.with(name).ok_or_else(|| {
                    format!(
                        "unknown failure `{name}`, expected one of {:?}",
                        RetryOn::NAMES
                    )
                })
            })
            .map(Failures)
    }
}

/// The pauses a node declares: `interrupt before|after` (a node's own ask is no attribute).
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Pause {
    Before,
    After,
}

impl From<NodeIn> for Node {
    fn from(node: NodeIn) -> Node {
        Node {
            id: node.id,
            doc: node.doc,
            kind: node.kind,
            retry: node.retry.map(|retries| Retry {
                retries,
                backoff_ms: node.backoff_ms,
                max_backoff_ms: node.max_backoff_ms,
                jitter: node.jitter.unwrap_or(false),
                on: node
                    .retry_on
                    .map_or_else(RetryOn::default, |Failures(on)| on),
            }),
            timeout_ms: node.timeout_ms,
            max_visits: node.max_visits,
            interrupt: node.interrupt.map(|pause| match pause {
                Pause::Before => InterruptPoint::Before,
                Pause::After => InterruptPoint::After,
            }),
            question: node.question,
            defer: node.defer.unwrap_or(false),
            on_error: node.on_error,
            meta: node.meta,
            max_concurrency: node.max_concurrency,
            input: node.input,
            graph: node.graph,
            writes: node.writes,
            answer: node.answer,
            asks: node.asks,
        }
    }
}

/// `meta` as an object in declaration order (a `Vec` of pairs: no map type keeps it without a
/// crate of its own).
fn meta_out<S: Serializer>(
    meta: &&[(String, MetaValue)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(meta.len()))?;
    for (key, value) in meta.iter() {
        map.serialize_entry(key, value)?;
    }
    map.end()
}

/// `meta` in the order the document gives it; null is none.
fn meta_in<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, MetaValue)>, D::Error> {
    struct Entries;
    impl<'de> de::Visitor<'de> for Entries {
        type Value = Vec<(String, MetaValue)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object of meta values")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_any(Entries)
}

impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl From<String> for Endpoint {
    fn from(name: String) -> Endpoint {
        Endpoint::from_owned(name)
    }
}

/// `{"kind": "static" | "join", "from", "to"}`, or `{"kind": "conditional" | "fork" | "send",
/// "from", "targets"}`. A join `a & b -> j` is one `join` edge per source.
/// (A malformed static or join edge, whose targets are not one, is written with `targets`.)
impl Serialize for Edge {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let out = match (self.kind, self.targets.as_slice()) {
            (kind @ (EdgeKind::Static | EdgeKind::Join), [to]) => EdgeOut {
                kind,
                from: &self.from,
                to: Some(to),
                targets: None,
            },
            (kind, targets) => EdgeOut {
                kind: match kind {
                    EdgeKind::Static => EdgeKind::Conditional,
                    other => other,
                },
                from: &self.from,
                to: None,
                targets: Some(targets),
            },
        };
        out.serialize(serializer)
    }
}

/// An edge as written, borrowed from the blueprint: `to` or `targets`.
#[derive(Serialize)]
struct EdgeOut<'a> {
    kind: EdgeKind,
    from: &'a Endpoint,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<&'a Endpoint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    targets: Option<&'a [Endpoint]>,
}

/// An edge as read: `to` for a static or join edge, `targets` for the others.
#[derive(Deserialize)]
pub(crate) struct EdgeIn {
    kind: EdgeKind,
    from: Endpoint,
    to: Option<Endpoint>,
    targets: Option<Vec<Endpoint>>,
}

impl TryFrom<EdgeIn> for Edge {
    type Error = String;

    fn try_from(edge: EdgeIn) -> Result<Edge, String> {
        let targets = match (edge.to, edge.targets) {
            (Some(to), _) => vec![to],
            (None, Some(targets)) => targets,
            (None, None) if matches!(edge.kind, EdgeKind::Static | EdgeKind::Join) => {
                return Err("missing field `to`".to_owned());
            }
            (None, None) => return Err("missing field `targets`".to_owned()),
        };
        Ok(Edge {
            from: edge.from,
            kind: edge.kind,
            targets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Blueprint {
        Blueprint {
            name: "Support".into(),
            doc: Some("Answers tickets.".into()),
            state: Some("Ticket".into()),
            max_steps: Some(25),
            nodes: vec![
                Node {
                    id: "classify".into(),
                    kind: Some(NodeKind::Delegate("Triage".into())),
                    retry: Some(Retry {
                        backoff_ms: Some(200),
                        ..Retry::new(3)
                    }),
                    timeout_ms: Some(10_000),
                    meta: vec![
                        ("owner".into(), MetaValue::Text("support".into())),
                        ("pages".into(), MetaValue::Integer(3)),
                        ("live".into(), MetaValue::Bool(true)),
                    ],
                    ..Node::new("classify")
                },
                Node {
                    interrupt: Some(InterruptPoint::Before),
                    question: Some("Send it?".into()),
                    defer: true,
                    on_error: Some("classify".into()),
                    kind: Some(NodeKind::Hitl),
                    max_visits: Some(2),
                    ..Node::new("send")
                },
            ],
            edges: vec![
                Edge::to(Endpoint::Start, Endpoint::Node("classify".into())),
                Edge {
                    from: Endpoint::Node("classify".into()),
                    kind: EdgeKind::Conditional,
                    targets: vec![Endpoint::Node("send".into()), Endpoint::End],
                },
                Edge::to(Endpoint::Node("send".into()), Endpoint::End),
            ],
        }
    }

    #[test]
    fn the_json_shape_of_the_language_reference() {
        let json = serde_json::to_value(sample()).unwrap();
        assert_eq!(json["format"], 1);
        assert_eq!(json["entry"], "classify");
        assert_eq!(json["finish"], serde_json::json!(["send"]));
        assert_eq!(
            json["nodes"][0]["kind"],
            serde_json::json!({"delegate": "Triage"})
        );
        assert_eq!(json["nodes"][0]["retry"], 3);
        assert_eq!(json["nodes"][0]["backoff_ms"], 200);
        assert_eq!(json["nodes"][1]["kind"], "hitl");
        assert_eq!(json["nodes"][1]["interrupt"], "before");
        assert_eq!(
            json["edges"][0],
            serde_json::json!({"kind": "static", "from": "__start__", "to": "classify"})
        );
        assert_eq!(
            json["edges"][1],
            serde_json::json!({"kind": "conditional", "from": "classify", "targets": ["send", "__end__"]})
        );
        let text = serde_json::to_string(&sample()).unwrap();
        assert!(
            text.contains(r#""meta":{"owner":"support","pages":3,"live":true}"#),
            "meta keeps its order: {text}"
        );
    }

    /// The bytes `trellis export --format json` prints for a graph with every attribute,
    /// a join, a send and a malformed static edge: format 1, pinned.
    #[test]
    fn format_1_byte_for_byte() {
        let mut graph = sample();
        graph.nodes[0].max_concurrency = Some(8);
        graph.nodes[0].input = Some("Doc".into());
        graph.nodes[0].writes = Some(vec!["notes".into(), "sources".into()]);
        graph.nodes[1].graph = Some("Review".into());
        graph.nodes.push(Node {
            kind: Some(NodeKind::Custom("mine".into())),
            interrupt: Some(InterruptPoint::After),
            ..Node::new("tail")
        });
        graph.edges.extend(Edge::join(
            [Endpoint::Node("a".into()), Endpoint::Node("b".into())],
            &Endpoint::Node("send".into()),
        ));
        graph.edges.push(Edge {
            from: Endpoint::Node("classify".into()),
            kind: EdgeKind::Each,
            targets: vec![Endpoint::Node("a".into())],
        });
        graph.edges.push(Edge {
            from: Endpoint::Node("a".into()),
            kind: EdgeKind::Static,
            targets: vec![Endpoint::Node("b".into()), Endpoint::End],
        });
        graph.edges.push(Edge {
            from: Endpoint::Node("b".into()),
            kind: EdgeKind::Fork,
            targets: vec![Endpoint::Node("a".into()), Endpoint::Node("tail".into())],
        });
        let text = serde_json::to_string(&graph).unwrap();
        assert_eq!(text, PINNED);
        let back: Blueprint = serde_json::from_str(&text).unwrap();
        // A static edge with two targets reads back as the conditional it is written as.
        graph.edges[6].kind = EdgeKind::Conditional;
        assert_eq!(back, graph);
        let bare = serde_json::to_string(&Blueprint::new("G")).unwrap();
        assert_eq!(
            bare,
            r#"{"format":1,"name":"G","doc":null,"state":null,"max_steps":null,"entry":null,"finish":[],"nodes":[],"edges":[]}"#
        );
    }

    const PINNED: &str = r#"{"format":1,"name":"Support","doc":"Answers tickets.","state":"Ticket","max_steps":25,"entry":"classify","finish":["send"],"nodes":[{"id":"classify","doc":null,"kind":{"delegate":"Triage"},"retry":3,"backoff_ms":200,"timeout_ms":10000,"max_visits":null,"interrupt":null,"question":null,"defer":false,"on_error":null,"meta":{"owner":"support","pages":3,"live":true},"max_concurrency":8,"input":"Doc","writes":["notes","sources"]},{"id":"send","doc":null,"kind":"hitl","retry":null,"backoff_ms":null,"timeout_ms":null,"max_visits":2,"interrupt":"before","question":"Send it?","defer":true,"on_error":"classify","meta":{},"graph":"Review"},{"id":"tail","doc":null,"kind":{"custom":"mine"},"retry":null,"backoff_ms":null,"timeout_ms":null,"max_visits":null,"interrupt":"after","question":null,"defer":false,"on_error":null,"meta":{}}],"edges":[{"kind":"static","from":"__start__","to":"classify"},{"kind":"conditional","from":"classify","targets":["send","__end__"]},{"kind":"static","from":"send","to":"__end__"},{"kind":"join","from":"a","to":"send"},{"kind":"join","from":"b","to":"send"},{"kind":"send","from":"classify","targets":["a"]},{"kind":"conditional","from":"a","targets":["b","__end__"]},{"kind":"fork","from":"b","targets":["a","tail"]}]}"#;

    /// A retry policy's keys are written when set, and read back to the same policy.
    #[test]
    fn a_retry_policy_reads_back_as_written() {
        let mut graph = sample();
        graph.nodes[0].retry = Some(Retry {
            backoff_ms: Some(200),
            max_backoff_ms: Some(5000),
            jitter: true,
            on: RetryOn::NONE
                .with("panic")
                .and_then(|on| on.with("timeout"))
                .unwrap(),
            ..Retry::new(3)
        });
        let text = serde_json::to_string(&graph).unwrap();
        assert!(
            text.contains(r#""retry":3,"backoff_ms":200,"max_backoff_ms":5000,"jitter":true,"retry_on":["timeout","panic"]"#),
            "{text}"
        );
        let back: Blueprint = serde_json::from_str(&text).unwrap();
        assert_eq!(back, graph);
    }

    #[test]
    fn reads_back_what_it_writes() {
        let text = serde_json::to_string(&sample()).unwrap();
        let back: Blueprint = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample());
    }

    /// A join is one `join` edge per source; a send lists its targets; `max_concurrency` is
    /// written only when set.
    #[test]
    fn joins_sends_and_max_concurrency_read_back_as_written() {
        let mut graph = sample();
        graph.nodes[0].max_concurrency = Some(8);
        graph.edges.extend(Edge::join(
            [
                Endpoint::Node("draft".into()),
                Endpoint::Node("review".into()),
            ],
            &Endpoint::Node("send".into()),
        ));
        graph.edges.push(Edge {
            from: Endpoint::Node("classify".into()),
            kind: EdgeKind::Each,
            targets: vec![Endpoint::Node("draft".into())],
        });
        let json = serde_json::to_value(&graph).unwrap();
        assert_eq!(json["nodes"][0]["max_concurrency"], 8);
        assert!(json["nodes"][1].get("max_concurrency").is_none());
        let edges = json["edges"].as_array().unwrap();
        let tail: Vec<&serde_json::Value> = edges.iter().rev().take(3).rev().collect();
        assert_eq!(
            tail,
            [
                &serde_json::json!({"kind": "join", "from": "draft", "to": "send"}),
                &serde_json::json!({"kind": "join", "from": "review", "to": "send"}),
                &serde_json::json!({"kind": "send", "from": "classify", "targets": ["draft"]}),
            ]
        );
        // Through text: a `Value` would sort `meta` by key.
        let back: Blueprint =
            serde_json::from_str(&serde_json::to_string(&graph).unwrap()).unwrap();
        assert_eq!(back, graph);
    }

    #[test]
    fn reading_errors_name_the_place() {
        let error = |text: &str| {
            serde_json::from_str::<Blueprint>(text)
                .unwrap_err()
                .to_string()
        };
        assert!(error(r#"{"format": 2}"#).contains("format 2 is not supported"));
        let bad_retry =
            r#"{"format": 1, "name": "G", "nodes": [{"id": "a", "retry": -1}], "edges": []}"#;
        assert!(
            error(bad_retry).contains("invalid value: integer `-1`"),
            "{}",
            error(bad_retry)
        );
        let bad_edge = r#"{"format": 1, "name": "G", "nodes": [], "edges": [{"kind": "loop"}]}"#;
        assert!(
            error(bad_edge).contains("unknown variant `loop`"),
            "{}",
            error(bad_edge)
        );
        let bad_failure = r#"{"format": 1, "name": "G", "nodes": [{"id": "a", "retry": 1, "retry_on": ["eror"]}], "edges": []}"#;
        assert!(
            error(bad_failure).contains("unknown failure `eror`"),
            "{}",
            error(bad_failure)
        );
        let no_edges = r#"{"format": 1, "name": "G", "nodes": []}"#;
        assert!(error(no_edges).contains("missing field `edges`"));
    }
}
