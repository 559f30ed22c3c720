//! Typed answers: each pause site declares the type it is answered with, and a resume is checked
//! against it — in Rust by the types (generated per-site helpers), over JSON by the site's type.
//!
//! A state names the answer types it takes with [`TakesAnswer`] (the derive implements it for
//! each `#[answer]` field). A state with one `#[answer]` field is answered with that field's
//! type; one with several is answered with a [`Reply`], which carries any of them and is folded
//! into the field of its type.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::graph::CompiledGraph;
use crate::interrupt::Interrupt;
use crate::state::{ApplyResume, GraphState};

/// An answer of one of the several types a state takes, told apart by its type: the
/// [`ApplyResume::Input`] of a state with several `#[answer]` fields.
///
/// Made by a graph's generated per-site helpers (`desk::answer::send(Decision::Approve)`), or by
/// [`TakesAnswer::input_of`].
pub struct Reply {
    value: Box<dyn Any + Send>,
    type_name: &'static str,
}

impl Reply {
    /// `value`, as an answer.
    pub fn new<T: Send + 'static>(value: T) -> Self {
        Reply {
            value: Box::new(value),
            type_name: std::any::type_name::<T>(),
        }
    }

    /// The name of the answer's type, as Rust spells it.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Whether the answer is a `T`.
    pub fn is<T: 'static>(&self) -> bool {
        self.value.is::<T>()
    }

    /// The answer as a `T`, or the reply back when it is of another type.
    ///
    /// # Errors
    /// The reply itself, unchanged, when its answer is no `T`.
    pub fn take<T: 'static>(self) -> Result<T, Reply> {
        let type_name = self.type_name;
        self.value
            .downcast::<T>()
            .map(|value| *value)
            .map_err(|value| Reply { value, type_name })
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// A reply is read from JSON by its pause site's type ([`CompiledGraph::read_answer`]): read
/// alone it has no type to be read as, and is refused with why. So a state answered with replies
/// can be served as any other.
impl<'de> serde::Deserialize<'de> for Reply {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Err(serde::de::Error::custom(
            "this pause declares no answer type, and the state takes answers of several: \
             declare one (`interrupt before \"…\" answer T;`, `asks Q -> T;`)",
        ))
    }
}

/// A state that takes answers of type `T` to its pauses: what a pause site typed `T`
/// (`interrupt before "Send it?" answer Decision;`, `asks Question -> Decision;`) needs of the
/// graph's state. `#[derive(GraphState)]` implements it for the type of each `#[answer]` field.
#[diagnostic::on_unimplemented(
    message = "the state `{Self}` takes no answer of type `{T}`",
    label = "a pause answered with `{T}`",
    note = "give the state an `#[answer]` field of type `Option<{T}>`, or answer this pause with a type it takes"
)]
pub trait TakesAnswer<T>: ApplyResume {
    /// `answer` as the state's answer input.
    fn input_of(answer: T) -> Self::Input;

    /// Whether `input` is an answer of type `T` (always, for a state with one answer type).
    fn is_answer(input: &Self::Input) -> bool;

    /// The JSON Schema of `T`, for a form that answers a pause of this type: the derive gives
    /// it under `#[graph_state(schema)]`. `None` by default.
    fn schema() -> Option<Value> {
        None
    }
}

/// A pause site of a compiled graph and the type it is answered with
/// ([`CompiledGraph::answer_sites`]): what a UI needs to render a form for it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AnswerSiteInfo {
    /// The node that pauses; for a subgraph's node, the path of node names down to it
    /// (`review/approve`), as a question's id (`review@2/approve@1`) names them.
    pub node: String,
    /// Whether the site is what the node asks from inside (`asks Q -> A;`), not its
    /// `interrupt before|after`.
    pub asked: bool,
    /// The answer's type, as Rust spells it.
    pub type_name: &'static str,
    /// The answer type's JSON Schema, where the state gives one ([`TakesAnswer::schema`]).
    pub schema: Option<Value>,
}

/// What a pause site is answered with: its type's name and how to check and read an answer as the state's [`ApplyResume::Input`], type-erased so that the graph's nodes can hold
/// it whatever their state.
#[derive(Clone, Copy)]
pub(crate) struct AnswerSite {
    /// The answer's type, as Rust spells it.
    pub(crate) type_name: &'static str,
    /// Whether an `&S::Input` (erased) is an answer of the site's type.
    accepts: fn(&dyn Any) -> bool,
    /// An answer read from JSON as the site's type, returned as a boxed `S::Input`.
    decode: fn(Value) -> Result<Box<dyn Any + Send>, serde_json::Error>,
    /// The type's JSON Schema, where the state gives one.
    schema: fn() -> Option<Value>,
}

impl std::fmt::Debug for AnswerSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AnswerSite").field(&self.type_name).finish()
    }
}

impl AnswerSite {
    /// The site answered with `T`, on state `S`.
    pub(crate) fn of<S, T>() -> Self
    where
        S: TakesAnswer<T>,
        T: DeserializeOwned + 'static,
    {
        AnswerSite {
            type_name: std::any::type_name::<T>(),
            accepts: accepts::<S, T>,
            decode: decode::<S, T>,
            schema: <S as TakesAnswer<T>>::schema,
        }
    }

    /// Whether `input` (an `&S::Input`) answers this site.
    pub(crate) fn accepts(&self, input: &dyn Any) -> bool {
        (self.accepts)(input)
    }

    /// `value` read as this site's type: a boxed `S::Input`.
    ///
    /// # Errors
    /// Why `value` is not of the site's type, as serde says it.
    pub(crate) fn decode(&self, value: Value) -> Result<Box<dyn Any + Send>, serde_json::Error> {
        (self.decode)(value)
    }
}

impl<S: ApplyResume> CompiledGraph<S> {
    /// The type the pause `interrupt` of a run of this graph is answered with, where its site
    /// declares one (`interrupt before "…" answer T;`, `asks Q -> T;`), as Rust spells it.
    /// `None` for a site that takes any answer of the state's type. A subgraph's question
    /// (`review@2/approve@1`) is typed by the child's node that asked it.
    pub fn answer_type(&self, interrupt: &Interrupt) -> Option<&'static str> {
        self.site(interrupt).map(|site| site.type_name)
    }

    /// `value` read as the answer to `interrupt`, a pause of a run of this graph, by the type
    /// its site declares: what a server does with an answer sent as JSON. `None` where
    /// [`answer_type`](Self::answer_type) is `None` (read it as `S::Input`).
    ///
    /// # Errors
    /// Why `value` is not of the site's type, as serde says it.
    pub fn read_answer(
        &self,
        interrupt: &Interrupt,
        value: Value,
    ) -> Option<Result<S::Input, serde_json::Error>> {
        let site = self.site(interrupt)?;
        // `AnswerSite::of::<S, T>` boxes an `S::Input`, and a graph's sites are its state's.
        Some(site.decode(value).and_then(|answer| {
            answer
                .downcast::<S::Input>()
                .map(|answer| *answer)
                .map_err(|_| {
                    serde::de::Error::custom("the answer site decodes another state's answers")
                })
        }))
    }

    /// The site that types `interrupt`'s answer, if any. A subgraph's question
    /// (`review@2/approve@1`) is typed by the child's site, found in the child (and its own
    /// children): so a wrong answer to it is refused before the parent run is claimed.
    pub(crate) fn site(&self, interrupt: &Interrupt) -> Option<AnswerSite> {
        match interrupt.id.split_once('/') {
            None => {
                let at = self.topology.find(&interrupt.node).ok()?;
                self.topology.nodes[at].sites.at(interrupt.point).copied()
            }
            Some((_, inner)) => {
                let at = self.topology.find(&interrupt.node).ok()?;
                let child = self.topology.nodes[at].subgraph.as_ref()?;
                child.site(inner, &interrupt.request.kind)
            }
        }
    }
}

impl<S: GraphState> CompiledGraph<S> {
    /// Every typed pause site of the graph, in node order (a node's `interrupt` before what it
    /// asks, then its child's sites for a subgraph node, named by the path of nodes down to
    /// them: `review/approve`), with its type's JSON Schema where the state gives one.
    pub fn answer_sites(&self) -> Vec<AnswerSiteInfo> {
        let mut sites = Vec::new();
        for node in &self.topology.nodes {
            for (site, asked) in [(&node.sites.pause, false), (&node.sites.asked, true)] {
                if let Some(site) = site {
                    sites.push(AnswerSiteInfo {
                        node: node.name.to_string(),
                        asked,
                        type_name: site.type_name,
                        schema: (site.schema)(),
                    });
                }
            }
            if let Some(child) = &node.subgraph {
                sites.extend(child.answer_sites().into_iter().map(|mut site| {
                    site.node = format!("{}/{}", node.name, site.node);
                    site
                }));
            }
        }
        sites
    }

    /// The site of the question `id` (`node@step`, or `review@2/approve@1` down a subgraph) a
    /// run of this graph asked, as its parent sees it: the parent's copy of the question keeps
    /// its request, not its pause point, so a node typing both its `interrupt` and what it
    /// `asks` is told apart by the request's `kind` (`before` and `after` are its pause's).
    pub(crate) fn site_below(&self, id: &str, kind: &str) -> Option<AnswerSite> {
        let (head, rest) = match id.split_once('/') {
            Some((head, rest)) => (head, Some(rest)),
            None => (id, None),
        };
        let (name, _) = head.split_once('@')?;
        let node = &self.topology.nodes[self.topology.find(name).ok()?];
        if let Some(rest) = rest {
            return node.subgraph.as_ref()?.site(rest, kind);
        }
        match (node.sites.pause, node.sites.asked) {
            (Some(pause), Some(_)) if matches!(kind, "before" | "after") => Some(pause),
            (_, Some(asked)) => Some(asked),
            (pause, None) => pause,
        }
    }
}

fn accepts<S: TakesAnswer<T>, T>(input: &dyn Any) -> bool {
    input.downcast_ref::<S::Input>().is_some_and(S::is_answer)
}

fn decode<S: TakesAnswer<T>, T: DeserializeOwned>(
    value: Value,
) -> Result<Box<dyn Any + Send>, serde_json::Error> {
    let answer: T = serde_json::from_value(value)?;
    Ok(Box::new(S::input_of(answer)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_gives_back_its_answer_as_its_own_type_only() {
        let reply = Reply::new(3_u8);
        assert!(reply.is::<u8>() && !reply.is::<u16>());
        let reply = reply.take::<u16>().unwrap_err();
        assert_eq!(reply.type_name(), "u8");
        assert_eq!(reply.take::<u8>().unwrap(), 3);
    }
}
