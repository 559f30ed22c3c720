#![doc = include_str!("../README.md")]

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use trellis::{GraphState, NodeContext, NodeError};

trellis::include_graph!("../graphs/research.graph");

/// The research run's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize, GraphState)]
pub struct ResearchState {
    /// The question.
    pub question: String,
    /// The queries `plan` made.
    pub queries: Vec<String>,
    /// What every search found, in the order the searches are declared.
    #[reducer(append)]
    pub findings: Vec<String>,
    /// Searches that failed.
    #[reducer(append)]
    pub missing: Vec<String>,
    /// The answer.
    pub summary: Option<String>,
}

struct Researcher {
    /// A source whose search fails, to show `on_error`.
    failing: Option<String>,
}

impl Researcher {
    /// What searching `source` found. Each search node writes it into `findings`, its only
    /// field (`writes findings;`).
    async fn search(
        &self,
        source: &str,
        delay_ms: u64,
        state: &ResearchState,
    ) -> Result<String, NodeError> {
        // Sources answer at different speeds; the merge is in declaration order regardless.
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        if self.failing.as_deref() == Some(source) {
            return Err(NodeError::msg(format!("{source} search is unavailable")));
        }
        Ok(format!(
            "{source}: {} result(s) for {:?}",
            state.queries.len(),
            state.question
        ))
    }
}

impl research::Handlers for Researcher {
    async fn plan(
        &self,
        state: Arc<ResearchState>,
        _: &mut NodeContext,
    ) -> research::Written<research::PlanWrites> {
        let queries = vec![state.question.clone(), format!("{} survey", state.question)];
        Ok(research::PlanWrites::default().queries(queries).into())
    }

    async fn search_web(
        &self,
        state: Arc<ResearchState>,
        _: &mut NodeContext,
    ) -> research::Written<research::SearchWebWrites> {
        let finding = self.search("web", 30, &state).await?;
        Ok(research::SearchWebWrites::default()
            .findings(finding)
            .into())
    }

    async fn search_papers(
        &self,
        state: Arc<ResearchState>,
        _: &mut NodeContext,
    ) -> research::Written<research::SearchPapersWrites> {
        let finding = self.search("papers", 5, &state).await?;
        Ok(research::SearchPapersWrites::default()
            .findings(finding)
            .into())
    }

    async fn search_code(
        &self,
        state: Arc<ResearchState>,
        _: &mut NodeContext,
    ) -> research::Written<research::SearchCodeWrites> {
        let finding = self.search("code", 15, &state).await?;
        Ok(research::SearchCodeWrites::default()
            .findings(finding)
            .into())
    }

    async fn search_failed(
        &self,
        _: Arc<ResearchState>,
        ctx: &mut NodeContext,
    ) -> research::Written<research::SearchFailedWrites> {
        let what = ctx.failure().map_or_else(
            || "a search".to_owned(),
            |f| format!("{} ({})", f.node, f.message),
        );
        Ok(research::SearchFailedWrites::default().missing(what).into())
    }

    async fn summarize(
        &self,
        state: Arc<ResearchState>,
        _: &mut NodeContext,
    ) -> research::Written<research::SummarizeWrites> {
        let mut summary = format!(
            "{} finding(s): {}",
            state.findings.len(),
            state.findings.join(" | ")
        );
        if !state.missing.is_empty() {
            summary.push_str(&format!("; missing: {}", state.missing.join(", ")));
        }
        Ok(research::SummarizeWrites::default()
            .summary(Some(summary))
            .into())
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // What the example shows, and how to run it: its README.
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{}", include_str!("../README.md"));
        return std::process::ExitCode::SUCCESS;
    }
    match research_question().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The question in the arguments, or a sample one; `--fail SOURCE` makes one search fail.
async fn research_question() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let failing = match args.first().map(String::as_str) {
        Some("--fail") if args.len() >= 2 => {
            let source = args.remove(1);
            args.remove(0);
            Some(source)
        }
        _ => None,
    };
    let question = if args.is_empty() {
        "how do tides work".to_owned()
    } else {
        args.join(" ")
    };
    let graph = research::build(Researcher { failing });
    let mut events = graph.subscribe();
    let outcome = graph
        .invoke(ResearchState {
            question,
            ..ResearchState::default()
        })
        .await?;
    let steps: Vec<String> = std::iter::from_fn(|| events.try_next())
        .filter_map(|event| match event {
            trellis::event::Event::NodeCompleted { step, node, .. } => {
                Some(format!("{step}:{node}"))
            }
            _ => None,
        })
        .collect();
    println!("steps: {}", steps.join(" "));
    println!(
        "{}",
        outcome.state().summary.as_deref().unwrap_or("(no summary)")
    );
    Ok(())
}
