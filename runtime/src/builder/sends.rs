//! Typed sends in the builder: a node declared with the type of the input its sent branches
//! carry gives back a [`SentNode<T>`], and only a `T` can be sent to it — a mismatch is a
//! compile error, as it is in generated code, not a failed branch at run time.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::GraphBuilder;
use crate::graph::Visits;
use crate::node::{Node, NodeContext, NodeError, NodeResult, SendTo};
use crate::options::NodeOptions;
use crate::state::GraphState;

/// A node that sent branches run, each with an input of type `T`: what
/// [`GraphBuilder::add_sent_node_fn`] gives back. Sending to it takes a `T`
/// ([`GraphBuilder::add_send_to`], [`SentNode::with`]), so a branch carrying anything else
/// does not compile.
pub struct SentNode<T> {
    name: Arc<str>,
    input: PhantomData<fn(T) -> T>,
}

impl<T> SentNode<T> {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl<T: Serialize> SentNode<T> {
    /// A branch running this node with `input`: for a node's
    /// [`Command::Sends`](crate::Command::Sends).
    ///
    /// # Errors
    /// `input` cannot be written as JSON (a map with non-string keys, a failing `Serialize`).
    pub fn with(&self, input: &T) -> Result<SendTo, serde_json::Error> {
        SendTo::new(String::from(&*self.name), input)
    }
}

impl<T> Clone for SentNode<T> {
    fn clone(&self) -> Self {
        SentNode {
            name: Arc::clone(&self.name),
            input: PhantomData,
        }
    }
}

impl<T> fmt::Debug for SentNode<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SentNode")
            .field("name", &self.name)
            .field("input", &std::any::type_name::<T>())
            .finish()
    }
}

impl<S: GraphState> GraphBuilder<S> {
    /// Declares a closure node that sent branches run, each with an input of type `T`, which
    /// the closure receives read: `|state, input: T, ctx| async move { … }`. The node is given
    /// back as a [`SentNode<T>`], which [`add_send_to`](Self::add_send_to) and
    /// [`SentNode::with`] take a `T` for.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use serde::{Deserialize, Serialize};
    /// use trellis::{END, GraphBuilder, GraphState, START};
    ///
    /// #[derive(Clone, Default, Serialize, Deserialize, GraphState)]
    /// struct Review {
    ///     documents: Vec<String>,
    ///     #[reducer(append)]
    ///     summaries: Vec<String>,
    /// }
    ///
    /// let mut graph = GraphBuilder::<Review>::new("Review");
    /// let summarize = graph.add_sent_node_fn("summarize", |_, document: String, _| async move {
    ///     let words = document.split(' ').count();
    ///     Ok(ReviewUpdate::default().summaries(format!("{words} words")).into())
    /// });
    /// graph
    ///     .add_send_to(START, &summarize, |review: &Review, _| review.documents.clone())
    ///     .add_edge("summarize", END);
    /// let documents = vec!["a b".into(), "c".into(), "d e f".into()];
    /// let outcome = graph.compile()?.invoke(Review { documents, ..Review::default() }).await?;
    /// assert_eq!(outcome.state().summaries, ["2 words", "1 words", "3 words"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn add_sent_node_fn<T, F, Fut>(&mut self, name: impl Into<String>, f: F) -> SentNode<T>
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(Arc<S>, T, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
    {
        self.add_sent_node_fn_with(name, f, NodeOptions::default())
    }

    /// [`add_sent_node_fn`](Self::add_sent_node_fn) with options (such as
    /// [`max_concurrency`](NodeOptions::max_concurrency)).
    pub fn add_sent_node_fn_with<T, F, Fut>(
        &mut self,
        name: impl Into<String>,
        f: F,
        options: NodeOptions,
    ) -> SentNode<T>
    where
        T: DeserializeOwned + Send + 'static,
        F: Fn(Arc<S>, T, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
    {
        let name: Arc<str> = name.into().into();
        self.add_node_with(
            &*name,
            SentFn {
                f,
                input: PhantomData,
            },
            options,
        );
        // The blueprint names the input's type, as a `.graph` file's `input T;` does.
        if let Some(node) = self.blueprint.nodes.last_mut() {
            node.input = Some(short_type_name(std::any::type_name::<T>()));
        }
        SentNode {
            name,
            input: PhantomData,
        }
    }

    /// Declares a send edge from `from` to the typed node `to`: `fan` gives, from the state,
    /// one input per branch to run (none ends this branch of the run). A branch's input that
    /// cannot be written as JSON fails the run with
    /// [`RunError::SendInput`](crate::RunError::SendInput).
    pub fn add_send_to<T, F>(
        &mut self,
        from: impl Into<String>,
        to: &SentNode<T>,
        fan: F,
    ) -> &mut Self
    where
        T: Serialize + 'static,
        F: Fn(&S, &Visits<'_>) -> Vec<T> + Send + Sync + 'static,
    {
        let node = Arc::clone(&to.name);
        self.push_send(
            from.into(),
            super::endpoints([String::from(&*to.name)]),
            Box::new(move |state, visits| {
                fan(state, visits)
                    .iter()
                    .map(|input| SendTo::new(String::from(&*node), input))
                    .collect()
            }),
        )
    }
}

/// A closure node whose sent branches' input is read as `T` before it runs.
struct SentFn<T, F> {
    f: F,
    input: PhantomData<fn() -> T>,
}

// As `FnNode`: the closure's own future, boxed once.
impl<S, T, F, Fut> Node<S> for SentFn<T, F>
where
    S: GraphState,
    T: DeserializeOwned + Send + 'static,
    F: Fn(Arc<S>, T, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'static,
{
    fn run<'node, 'ctx, 'work>(
        &'node self,
        state: Arc<S>,
        ctx: &'ctx mut NodeContext,
    ) -> Pin<Box<dyn Future<Output = Result<NodeResult<S::Update>, NodeError>> + Send + 'work>>
    where
        'node: 'work,
        'ctx: 'work,
        Self: 'work,
    {
        // Typed senders write a `T`; an activation reached otherwise (a `goto`, an edge, a
        // send by JSON) fails with what `NodeContext::input` says.
        match ctx.input::<T>() {
            Ok(input) => Box::pin((self.f)(state, input, ctx.clone())),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
}

/// `alloc::vec::Vec<my_app::Doc>` as a person writes it: `Vec<Doc>`.
fn short_type_name(full: &str) -> String {
    let mut short = String::with_capacity(full.len());
    let mut segment = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            segment.push(c);
        } else {
            short.push_str(segment.rsplit("::").next().unwrap_or_default());
            segment.clear();
            short.push(c);
        }
    }
    short.push_str(segment.rsplit("::").next().unwrap_or_default());
    short
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn a_type_is_named_without_its_module_paths() {
        assert_eq!(short_type_name("alloc::string::String"), "String");
        assert_eq!(
            short_type_name("alloc::vec::Vec<my_app::docs::Doc>"),
            "Vec<Doc>"
        );
        assert_eq!(
            short_type_name("(u32, std::collections::HashMap<alloc::string::String, i64>)"),
            "(u32, HashMap<String, i64>)"
        );
        assert_eq!(short_type_name("[u8; 4]"), "[u8; 4]");
    }
}
