//! The builder's check of declared write sets against the state's fields (E0216) and their
//! reducers (E0214): what generated code has the compiler check, for a graph built by calls;
//! and of two subgraph nodes on this state in one super-step (E0218), as the language checks.

use std::collections::HashMap;
use std::sync::Arc;

use trellis_graph::{
    Blueprint, Code, WriteSets, same_step_subgraphs, same_step_writes, unknown_field_message,
};

use crate::errors::BuildDiagnostic;
use crate::state::GraphState;
use crate::subgraph::Subgraph;

/// Two subgraph nodes on `S` in one super-step (E0218); then each `writes` entry naming no
/// field of `S`, and each field two nodes of one super-step write and whose reducer overwrites
/// (a subgraph node writing what its child does), for a state that lists its fields.
pub(super) fn errors<S: GraphState>(
    blueprint: &Blueprint,
    subgraphs: &HashMap<usize, Arc<dyn Subgraph<S>>>,
) -> Vec<BuildDiagnostic> {
    let mut errors = Vec::new();
    if subgraphs.len() >= 2 {
        let whole: Vec<bool> = (0..blueprint.nodes.len())
            .map(|at| subgraphs.get(&at).is_some_and(|node| node.replaces()))
            .collect();
        if let Some(pair) = same_step_subgraphs(blueprint, &whole) {
            errors.push(BuildDiagnostic {
                code: Code::E0218,
                message: pair.message(blueprint),
                help: Some(pair.help()),
            });
        }
    }
    let Some(fields) = S::fields() else {
        return errors;
    };
    let combines = |name: &str| {
        fields
            .iter()
            .find(|(field, _)| *field == name)
            .map(|&(_, combines)| combines)
    };
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
