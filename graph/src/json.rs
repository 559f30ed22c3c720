//! The blueprint's JSON shape (LANGUAGE.md §6, `"format": 1`), written and read by hand so that
//! this crate needs no derive macro.
//!
//! `entry` and `finish` are derived from the edges when writing and ignored when reading.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::blueprint::{
    Blueprint, Edge, EdgeKind, Endpoint, InterruptPoint, MetaValue, Node, NodeKind, Retry,
};

/// The version of the JSON shape; bumped on any incompatible change.
pub const JSON_FORMAT: u32 = 1;

impl Serialize for Blueprint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Blueprint", 9)?;
        out.serialize_field("format", &JSON_FORMAT)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("doc", &self.doc)?;
        out.serialize_field("state", &self.state)?;
        out.serialize_field("max_steps", &self.max_steps)?;
        out.serialize_field("entry", &self.entry().map(Endpoint::as_str))?;
        out.serialize_field("finish", &self.finish().collect::<Vec<_>>())?;
        out.serialize_field("nodes", &self.nodes)?;
        out.serialize_field("edges", &self.edges)?;
        out.end()
    }
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Node", 12)?;
        out.serialize_field("id", &self.id)?;
        out.serialize_field("doc", &self.doc)?;
        out.serialize_field("kind", &self.kind)?;
        out.serialize_field("retry", &self.retry.map(|retry| retry.retries))?;
        out.serialize_field("backoff_ms", &self.retry.and_then(|retry| retry.backoff_ms))?;
        out.serialize_field("timeout_ms", &self.timeout_ms)?;
        out.serialize_field("max_visits", &self.max_visits)?;
        out.serialize_field("interrupt", &self.interrupt.map(InterruptPoint::as_str))?;
        out.serialize_field("question", &self.question)?;
        out.serialize_field("defer", &self.defer)?;
        out.serialize_field("on_error", &self.on_error)?;
        out.serialize_field("meta", &Meta(&self.meta))?;
        // Written only when set, so that the export of a graph without sends is unchanged.
        if let Some(max) = self.max_concurrency {
            out.serialize_field("max_concurrency", &max)?;
        }
        if let Some(input) = &self.input {
            out.serialize_field("input", input)?;
        }
        if let Some(graph) = &self.graph {
            out.serialize_field("graph", graph)?;
        }
        out.end()
    }
}

/// `meta` as an object in declaration order.
struct Meta<'a>(&'a [(String, MetaValue)]);

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Serialize for MetaValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MetaValue::Text(text) => serializer.serialize_str(text),
            MetaValue::Integer(number) => serializer.serialize_u32(*number),
            MetaValue::Bool(flag) => serializer.serialize_bool(*flag),
        }
    }
}

/// `"dispatch"`, `{"delegate": "Graph"}` or `{"custom": "text"}`.
impl Serialize for NodeKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (key, value) = match self {
            NodeKind::Delegate(graph) => ("delegate", graph),
            NodeKind::Custom(text) => ("custom", text),
            built_in => return serializer.serialize_str(built_in.built_in_name().unwrap_or("")),
        };
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(key, value)?;
        map.end()
    }
}

impl Serialize for InterruptPoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for InterruptPoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match String::deserialize(deserializer)?.as_str() {
            "before" => Ok(InterruptPoint::Before),
            "after" => Ok(InterruptPoint::After),
            "node" => Ok(InterruptPoint::Node),
            other => Err(de::Error::unknown_variant(
                other,
                &["before", "after", "node"],
            )),
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `{"kind": "static" | "join", "from", "to"}`, or `{"kind": "conditional" | "fork" | "send",
/// "from", "targets"}`. A join `a & b -> j` is one `join` edge per source.
/// (A malformed static or join edge, whose targets are not one, is written with `targets`.)
impl Serialize for Edge {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Edge", 3)?;
        match (self.kind, self.targets.as_slice()) {
            (kind @ (EdgeKind::Static | EdgeKind::Join), [to]) => {
                out.serialize_field("kind", kind.as_str())?;
                out.serialize_field("from", &self.from)?;
                out.serialize_field("to", to)?;
            }
            (kind, targets) => {
                let kind = match kind {
                    EdgeKind::Static => "conditional",
                    other => other.as_str(),
                };
                out.serialize_field("kind", kind)?;
                out.serialize_field("from", &self.from)?;
                out.serialize_field("targets", targets)?;
            }
        }
        out.end()
    }
}

// ---- reading ------------------------------------------------------------------------------------
//
// Visitors over the document's maps, so that `meta` keeps its order whatever the format, and
// unknown keys are skipped (a newer writer may add some).

impl<'de> Deserialize<'de> for Blueprint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(BlueprintVisitor)
    }
}

struct BlueprintVisitor;

impl<'de> Visitor<'de> for BlueprintVisitor {
    type Value = Blueprint;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a blueprint (an object with `format`, `name`, `nodes` and `edges`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Blueprint, A::Error> {
        let mut format: Option<u32> = None;
        let mut name: Option<String> = None;
        let mut blueprint = Blueprint::default();
        let (mut nodes, mut edges) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => format = Some(map.next_value()?),
                "name" => name = Some(map.next_value()?),
                "doc" => blueprint.doc = map.next_value()?,
                "state" => blueprint.state = map.next_value()?,
                "max_steps" => blueprint.max_steps = map.next_value()?,
                "nodes" => {
                    blueprint.nodes = map.next_value()?;
                    nodes = true;
                }
                "edges" => {
                    blueprint.edges = map.next_value()?;
                    edges = true;
                }
                // `entry` and `finish` are derived from the edges; other keys are a newer
                // writer's additions.
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        match format {
            Some(JSON_FORMAT) => {}
            Some(other) => {
                return Err(de::Error::custom(format!(
                    "blueprint format {other} is not supported (this version reads format {JSON_FORMAT})"
                )));
            }
            None => return Err(de::Error::missing_field("format")),
        }
        blueprint.name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        if !nodes {
            return Err(de::Error::missing_field("nodes"));
        }
        if !edges {
            return Err(de::Error::missing_field("edges"));
        }
        Ok(blueprint)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a node (an object with an `id`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut id: Option<String> = None;
        let mut node = Node::default();
        let mut retries: Option<u32> = None;
        let mut backoff_ms: Option<u64> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "id" => id = Some(map.next_value()?),
                "doc" => node.doc = map.next_value()?,
                "kind" => node.kind = map.next_value()?,
                "retry" => retries = map.next_value()?,
                "backoff_ms" => backoff_ms = map.next_value()?,
                "timeout_ms" => node.timeout_ms = map.next_value()?,
                "max_visits" => node.max_visits = map.next_value()?,
                "max_concurrency" => node.max_concurrency = map.next_value()?,
                "input" => node.input = map.next_value()?,
                "graph" => node.graph = map.next_value()?,
                "interrupt" => {
                    node.interrupt = match map.next_value::<Option<String>>()?.as_deref() {
                        None => None,
                        Some("before") => Some(InterruptPoint::Before),
                        Some("after") => Some(InterruptPoint::After),
                        Some(other) => {
                            return Err(de::Error::invalid_value(
                                de::Unexpected::Str(other),
                                &"`before` or `after`",
                            ));
                        }
                    }
                }
                "question" => node.question = map.next_value()?,
                "defer" => node.defer = map.next_value::<Option<bool>>()?.unwrap_or(false),
                "on_error" => node.on_error = map.next_value()?,
                "meta" => {
                    node.meta = map
                        .next_value::<Option<MetaEntries>>()?
                        .unwrap_or_default()
                        .0
                }
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        node.id = id.ok_or_else(|| de::Error::missing_field("id"))?;
        node.retry = retries.map(|retries| Retry {
            retries,
            backoff_ms,
        });
        Ok(node)
    }
}

/// `meta` in the order the document gives it.
#[derive(Default)]
struct MetaEntries(Vec<(String, MetaValue)>);

impl<'de> Deserialize<'de> for MetaEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = MetaEntries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of meta values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, MetaValue>()? {
                    entries.push((key, value));
                }
                Ok(MetaEntries(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

impl<'de> Deserialize<'de> for MetaValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Value;
        impl Visitor<'_> for Value {
            type Value = MetaValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, a 32-bit unsigned integer or a boolean")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<MetaValue, E> {
                Ok(MetaValue::Text(text.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, flag: bool) -> Result<MetaValue, E> {
                Ok(MetaValue::Bool(flag))
            }
            fn visit_u64<E: de::Error>(self, number: u64) -> Result<MetaValue, E> {
                u32::try_from(number)
                    .map(MetaValue::Integer)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(number), &self))
            }
            fn visit_i64<E: de::Error>(self, number: i64) -> Result<MetaValue, E> {
                u32::try_from(number)
                    .map(MetaValue::Integer)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(number), &self))
            }
        }
        deserializer.deserialize_any(Value)
    }
}

impl<'de> Deserialize<'de> for NodeKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Kind;
        impl<'de> Visitor<'de> for Kind {
            type Value = NodeKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a built-in kind (\"dispatch\", …), {\"delegate\": \"Graph\"} or {\"custom\": \"text\"}",
                )
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<NodeKind, E> {
                NodeKind::BUILT_IN
                    .iter()
                    .find(|(known, _)| *known == name)
                    .map(|(_, kind)| kind.clone())
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(name), &self))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeKind, A::Error> {
                let kind = match map.next_entry::<String, String>()? {
                    Some((key, graph)) if key == "delegate" => NodeKind::Delegate(graph),
                    Some((key, text)) if key == "custom" => NodeKind::Custom(text),
                    _ => return Err(de::Error::invalid_value(de::Unexpected::Map, &self)),
                };
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::invalid_value(de::Unexpected::Map, &self));
                }
                Ok(kind)
            }
        }
        deserializer.deserialize_any(Kind)
    }
}

impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|name| Endpoint::from_name(&name))
    }
}

impl<'de> Deserialize<'de> for Edge {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EdgeVisitor)
    }
}

struct EdgeVisitor;

impl<'de> Visitor<'de> for EdgeVisitor {
    type Value = Edge;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an edge (an object with `kind`, `from` and `to` or `targets`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Edge, A::Error> {
        let mut kind: Option<String> = None;
        let mut from: Option<Endpoint> = None;
        let mut targets: Option<Vec<Endpoint>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => kind = Some(map.next_value()?),
                "from" => from = Some(map.next_value()?),
                "to" => targets = Some(vec![map.next_value()?]),
                "targets" => targets = Some(map.next_value()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let kind = match kind.as_deref() {
            Some("static") => EdgeKind::Static,
            Some("conditional") => EdgeKind::Conditional,
            Some("fork") => EdgeKind::Fork,
            Some("join") => EdgeKind::Join,
            Some("send") => EdgeKind::Each,
            Some(other) => {
                return Err(de::Error::unknown_variant(
                    other,
                    &["static", "conditional", "fork", "join", "send"],
                ));
            }
            None => return Err(de::Error::missing_field("kind")),
        };
        let missing = if matches!(kind, EdgeKind::Static | EdgeKind::Join) {
            "to"
        } else {
            "targets"
        };
        Ok(Edge {
            from: from.ok_or_else(|| de::Error::missing_field("from"))?,
            kind,
            targets: targets.ok_or_else(|| de::Error::missing_field(missing))?,
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
                        retries: 3,
                        backoff_ms: Some(200),
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

    const PINNED: &str = r#"{"format":1,"name":"Support","doc":"Answers tickets.","state":"Ticket","max_steps":25,"entry":"classify","finish":["send"],"nodes":[{"id":"classify","doc":null,"kind":{"delegate":"Triage"},"retry":3,"backoff_ms":200,"timeout_ms":10000,"max_visits":null,"interrupt":null,"question":null,"defer":false,"on_error":null,"meta":{"owner":"support","pages":3,"live":true},"max_concurrency":8,"input":"Doc"},{"id":"send","doc":null,"kind":"hitl","retry":null,"backoff_ms":null,"timeout_ms":null,"max_visits":2,"interrupt":"before","question":"Send it?","defer":true,"on_error":"classify","meta":{},"graph":"Review"},{"id":"tail","doc":null,"kind":{"custom":"mine"},"retry":null,"backoff_ms":null,"timeout_ms":null,"max_visits":null,"interrupt":"after","question":null,"defer":false,"on_error":null,"meta":{}}],"edges":[{"kind":"static","from":"__start__","to":"classify"},{"kind":"conditional","from":"classify","targets":["send","__end__"]},{"kind":"static","from":"send","to":"__end__"},{"kind":"join","from":"a","to":"send"},{"kind":"join","from":"b","to":"send"},{"kind":"send","from":"classify","targets":["a"]},{"kind":"conditional","from":"a","targets":["b","__end__"]},{"kind":"fork","from":"b","targets":["a","tail"]}]}"#;

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
        let no_edges = r#"{"format": 1, "name": "G", "nodes": []}"#;
        assert!(error(no_edges).contains("missing field `edges`"));
    }
}
