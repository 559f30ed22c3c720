//! Nodes that declare what they write (`writes`): each handler returns its own update type,
//! which sets those fields only, each by its reducer; then the graph runs.
#![deny(warnings, missing_docs, unreachable_pub, unused, clippy::all)]

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext};

/// What a research run gathers.
#[derive(Clone, Default, Serialize, Deserialize, GraphState)]
pub struct Research {
    /// The question asked.
    pub question: String,
    /// Notes, from every branch.
    #[reducer(append)]
    pub notes: Vec<String>,
    /// Sources found.
    #[reducer(extend)]
    pub sources: Vec<String>,
    /// Pages read, summed.
    #[reducer(sum)]
    pub pages: u32,
    /// The answer.
    pub answer: Option<String>,
    /// A field named by a Rust keyword.
    pub r#type: String,
}

trellis::graph! {
    graph Desk {
        state Research;
        node plan { writes question, r#type; }
        node web { writes notes, sources, pages; }
        node papers { writes notes, pages; }
        node write { writes answer; }
        START -> plan;
        plan -> web & papers;
        web & papers -> write;
        write -> END;
    }
}

struct Desk;

impl desk::Handlers for Desk {
    async fn plan(&self, state: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::PlanWrites> {
        Ok(desk::PlanWrites::default()
            .question(format!("{}?", state.question))
            .r#type("survey")
            .into())
    }

    async fn web(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WebWrites> {
        Ok(desk::WebWrites::default()
            .notes("web says yes")
            .sources(vec!["a.example".to_owned(), "b.example".to_owned()])
            .pages(3)
            .into())
    }

    async fn papers(&self, _: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::PapersWrites> {
        Ok(desk::PapersWrites::default().notes("papers agree").pages(4).into())
    }

    async fn write(&self, state: Arc<Research>, _: &mut NodeContext) -> desk::Written<desk::WriteWrites> {
        let answer = format!("{} ({} pages)", state.notes.join("; "), state.pages);
        Ok(desk::WriteWrites::default().answer(Some(answer)).into())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let outcome = runtime
        .block_on(desk::build(Desk).invoke(Research {
            question: "why".into(),
            ..Research::default()
        }))
        .expect("the run ends");
    let state = outcome.state();
    assert_eq!(state.question, "why?");
    assert_eq!(state.r#type, "survey");
    assert_eq!(state.notes, ["web says yes", "papers agree"]);
    assert_eq!(state.sources, ["a.example", "b.example"]);
    assert_eq!(state.pages, 7);
    assert_eq!(
        state.answer.as_deref(),
        Some("web says yes; papers agree (7 pages)")
    );
    let blueprint = desk::blueprint();
    let web = blueprint.node("web").expect("node web");
    assert_eq!(
        web.writes.as_deref(),
        Some(&["notes".to_owned(), "sources".to_owned(), "pages".to_owned()][..])
    );
}
