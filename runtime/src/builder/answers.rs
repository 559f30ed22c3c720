//! Typed pause sites: the type a node's `interrupt` is answered with, and its own questions'
//! (what `interrupt before "…" answer T;` and `asks Q -> A;` declare in the language).

use serde::de::DeserializeOwned;
use trellis_graph::{Asks, Code};

use super::GraphBuilder;
use crate::errors::BuildDiagnostic;
use crate::graph::Sites;
use crate::interrupt::TakesAnswer;
use crate::reply::AnswerSite;
use crate::state::GraphState;

/// Which of a node's pauses a site types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pause {
    /// Its `interrupt before|after`.
    Declared,
    /// What the node asks from inside (`NodeResult::Interrupt`).
    Asked,
}

/// A type's name as a person writes it: each path by its last name (`Decision` for
/// `trellis::interrupt::Decision`, `Vec<String>` for `Vec<alloc::string::String>`).
fn short_name<T>() -> String {
    let full = std::any::type_name::<T>();
    let last = |path: &str| path.rsplit("::").next().unwrap_or(path).to_owned();
    let mut name = String::with_capacity(full.len());
    let mut path = 0;
    for (at, c) in full.char_indices() {
        if matches!(
            c,
            '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | '&' | ';' | '*'
        ) {
            name.push_str(&last(&full[path..at]));
            name.push(c);
            path = at + c.len_utf8();
        }
    }
    name.push_str(&last(&full[path..]));
    name
}

impl<S: GraphState> GraphBuilder<S> {
    /// Makes node `node`'s pause (its `interrupt before|after`) answered with a `T` only: a
    /// resume with an answer of another of the state's types is refused
    /// ([`RunError::WrongAnswer`](crate::RunError::WrongAnswer)), and an answer read as JSON is
    /// read as a `T`. The blueprint records the type (`interrupt before … answer T;`).
    ///
    /// [`compile`](Self::compile) refuses it (E0217) for a node that does not pause or is not
    /// declared.
    pub fn set_answer<T>(&mut self, node: &str) -> &mut Self
    where
        S: TakesAnswer<T>,
        T: DeserializeOwned + 'static,
    {
        if let Some(at) = self.position(node) {
            self.blueprint.nodes[at]
                .answer
                .get_or_insert_with(short_name::<T>);
        }
        self.sites
            .push((node.to_owned(), Pause::Declared, AnswerSite::of::<S, T>()));
        self
    }

    /// Makes what node `node` asks from inside (`NodeResult::Interrupt`) a `Q`, answered with
    /// an `A` only, as [`set_answer`](Self::set_answer) does for a declared pause. The blueprint
    /// records both types (`asks Q -> A;`).
    pub fn set_asks<Q, A>(&mut self, node: &str) -> &mut Self
    where
        S: TakesAnswer<A>,
        A: DeserializeOwned + 'static,
    {
        if let Some(at) = self.position(node) {
            self.blueprint.nodes[at].asks.get_or_insert_with(|| Asks {
                question: short_name::<Q>(),
                answer: short_name::<A>(),
            });
        }
        self.sites
            .push((node.to_owned(), Pause::Asked, AnswerSite::of::<S, A>()));
        self
    }

    fn position(&self, node: &str) -> Option<usize> {
        self.blueprint.nodes.iter().position(|n| n.id == node)
    }

    /// Each node's sites, by position; or why one cannot be (E0217).
    pub(super) fn sites(&self) -> Result<Vec<Sites>, Vec<BuildDiagnostic>> {
        let mut sites = vec![Sites::default(); self.blueprint.nodes.len()];
        let mut errors = Vec::new();
        for (node, pause, site) in &self.sites {
            let refuse = |message: String, help: &str| BuildDiagnostic {
                code: Code::E0217,
                message,
                help: Some(help.to_owned()),
            };
            let Some(at) = self.position(node) else {
                errors.push(refuse(
                    format!("an answer type is set for `{node}`, which is no node of the graph"),
                    "name a declared node",
                ));
                continue;
            };
            match pause {
                Pause::Declared if self.nodes[at].1.interrupt.is_none() => errors.push(refuse(
                    format!("node `{node}` is given an answer type, but it does not pause"),
                    "give it `interrupt_before()` or `interrupt_after()`, or set the type of what it asks with `set_asks`",
                )),
                Pause::Declared => sites[at].pause = Some(*site),
                Pause::Asked => sites[at].asked = Some(*site),
            }
        }
        if errors.is_empty() {
            Ok(sites)
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_type_is_named_as_a_person_writes_it() {
        assert_eq!(
            super::short_name::<crate::interrupt::Decision>(),
            "Decision"
        );
        assert_eq!(super::short_name::<Vec<String>>(), "Vec<String>");
        assert_eq!(
            super::short_name::<Option<(u8, [crate::interrupt::Decision; 2])>>(),
            "Option<(u8, [Decision; 2])>"
        );
        assert_eq!(super::short_name::<&str>(), "&str");
    }
}
