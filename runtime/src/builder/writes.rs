//! The builder's check of declared write sets against the state's fields (E0216) and their
//! reducers (E0214): what generated code has the compiler check, for a graph built by calls.

use std::collections::HashMap;
use std::sync::Arc;

use trellis_graph::{Blueprint, Code, WriteSets, same_step_writes, unknown_field_message};

use crate::errors::BuildDiagnostic;
use crate::state::GraphState;
use crate::subgraph::Subgraph;

/// Each `writes` entry naming no field of `S`, then each field two nodes of one super-step
/// write and whose reducer overwrites (a subgraph node writing what its child does). Nothing
/// for a state that lists no fields.
pub(super) fn errors<S: GraphState>(
    blueprint: &Blueprint,
    subgraphs: &HashMap<usize, Arc<dyn Subgraph<S>>>,
) -> Vec<BuildDiagnostic> {
    let Some(fields) = S::fields() else {
        return Vec::new();
    };
    let combines = |name: &str| {
        fields
            .iter()
            .find(|(field, _)| *field == name)
            .map(|&(_, combines)| combines)
    };
    let mut errors = Vec::new();
    for node in &blueprint.nodes {
        for field in node.writes.iter().flatten() {
            if combines(field).is_none() {
                errors.push(BuildDiagnostic {
                    code: Code::E0216,
                    message: unknown_field_message(&node.id, field, None),
                    help: Some("name a field of the state, or remove it from `writes`".to_owned()),
                });
            }
        }
    }
    let mut reported: Vec<&str> = Vec::new();
    let sets = WriteSets::new(blueprint, |at, _| subgraphs.get(&at)?.writes());
    let pairs = same_step_writes(blueprint, &sets);
    for pair in &pairs {
        let field = pair.field.as_str();
        if combines(field) != Some(false) || reported.contains(&field) {
            continue;
        }
        reported.push(field);
        errors.push(BuildDiagnostic {
            code: Code::E0214,
            message: pair.message_pieces(blueprint, ["", ""], None).concat(),
            help: Some(pair.help()),
        });
    }
    errors
}
