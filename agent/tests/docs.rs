//! `docs/agents.md` says what is true: its agent definition loads, and the blueprint it shows is
//! the shipped file, word for word.

use std::path::Path;

use trellis_agent::{AgentDefinition, Catalogue};

/// The fenced blocks of `docs/agents.md` whose info string is `info`.
fn blocks(info: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/agents.md");
    let text = std::fs::read_to_string(path).expect("docs/agents.md");
    let mut blocks = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, Some(rest)) if rest.trim() == info => open = Some(String::new()),
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn the_agent_definition_shown_loads_into_the_shipped_catalogue() {
    let shown = blocks("markdown agent");
    assert_eq!(shown.len(), 1);
    let definition = AgentDefinition::parse("docs/agents.md", &shown[0]).expect("it parses");
    let mut catalogue = Catalogue::shipped().expect("shipped");
    catalogue.add_agent(definition).expect("it loads");
    catalogue.validate().expect("it checks");
    let example = include_str!("../../examples/agent_turn/agents/desk.md");
    assert_eq!(shown[0], example, "the example's agent is the one shown");
}

#[test]
fn the_blueprint_shown_is_the_shipped_file() {
    let shown = blocks("graph");
    assert_eq!(shown, [include_str!("../blueprints/canonical_turn.graph")]);
}
