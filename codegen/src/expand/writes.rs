//! A node's own update type when it declares `writes` (`node web { writes notes, sources; }`):
//! `WebWrites`, with a setter for each field named and no other, so that setting another field
//! does not compile. Each setter writes through `trellis::writes::SetField<I, V>`, the field's
//! position found from its name by a `const` placed at the `writes` entry: an entry naming no
//! field of the state is a compile error there.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;
use trellis_dsl::{Blueprint, GraphSpans};
use trellis_graph::WriteSets;

use crate::paths::Paths;
use crate::text::{Lines, Lit, put};

use super::{NodeNames, ident};

/// The `…Writes` type of each node that declares `writes`.
pub(super) fn writes_types(
    code: &mut Lines<'_>,
    blueprint: &Blueprint,
    spans: &GraphSpans,
    nodes: &[NodeNames<'_>],
    krate: &str,
    paths: &mut Paths<'_>,
) -> Vec<usize> {
    let state_path = blueprint.state.as_deref().unwrap_or("State");
    if nodes.iter().any(|n| n.writes.is_some()) {
        code.doc(
            "What the handler of a node with `writes` returns: its own update type `W` (`WebWrites`\n\
             for node `web`), or why it failed.",
        );
        put!(
            code,
            "pub type Written<W> = ::core::result::Result<{krate}::NodeResult<W>, {krate}::NodeError>;"
        );
    }
    // Nodes that write the very same fields share one type (and its checks): a large graph's
    // nodes mostly repeat a few write sets.
    let mut defined: HashMap<&[String], (usize, &str, &str), FxBuildHasher> = HashMap::default();
    let mut defining = vec![usize::MAX; blueprint.nodes.len()];
    for n in nodes {
        let (Some(ty), Some(fields)) = (&n.writes, &n.node.writes) else {
            continue;
        };
        code.boundary();
        let id = &n.node.id;
        let listed = fields
            .iter()
            .map(|field| format!("`{field}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(&(at, first_ty, first_id)) = defined.get(fields.as_slice()) {
            defining[n.at] = at;
            code.doc_line(format_args!(
                " What node `{id}` may change: {listed}, as node `{first_id}` (their `writes`)."
            ));
            put!(code, "pub type {ty} = {first_ty};");
            continue;
        }
        defined.insert(fields.as_slice(), (n.at, ty.as_str(), id.as_str()));
        defining[n.at] = n.at;
        code.doc_line(format_args!(
            " What node `{id}` may change: {listed} (its `writes`). Its handler returns it: `Ok({ty}::default()….into())`."
        ));
        put!(
            code,
            "#[derive(::core::clone::Clone, ::core::default::Default)]"
        );
        put!(
            code,
            "pub struct {ty}(<State as {krate}::GraphState>::Update);"
        );
        let written = spans
            .nodes
            .get(n.at)
            .map_or(&[][..], |s| s.writes.as_slice());
        let consts: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(k, field)| {
                let at = written.get(k).copied();
                let missing = format!(
                    "E0216: {}{}",
                    trellis_graph::unknown_field_message(id, field, Some(state_path)),
                    at.map(|at| code.located(at)).unwrap_or_default()
                );
                let name = format!("__WRITES_{}_{k}", n.at);
                // The message on a line of its own: a build script's lines stay short enough
                // for rustc to quote.
                put!(code, "const {name}_MISSING: &str = {};", Lit(&missing));
                let index = paths.place_at(
                    &format!(
                        "{krate}::__private::field_of::<State>({}, {name}_MISSING)",
                        Lit(field)
                    ),
                    at,
                );
                put!(code, "const {name}: usize = {index};");
                name
            })
            .collect();
        put!(code, "impl {ty} {{");
        for (field, index) in fields.iter().zip(&consts) {
            let Some(method) = ident(field) else { continue };
            let slot = format!("{krate}::writes::SetField<{{ {index} }}, V>");
            code.doc_line(format_args!(
                " Writes `{field}`, as the update's own setter does."
            ));
            put!(code, "#[must_use]");
            put!(
                code,
                "pub fn {method}<V>(mut self, value: V) -> Self where State: {slot} {{"
            );
            put!(code, "<State as {slot}>::set(&mut self.0, value);");
            put!(code, "self");
            put!(code, "}}");
        }
        code.doc("The state's update these writes make.");
        put!(
            code,
            "pub fn into_update(self) -> <State as {krate}::GraphState>::Update {{"
        );
        put!(code, "self.0");
        put!(code, "}}");
        put!(code, "}}");
    }
    defining
}

/// E0214: for each pair of nodes that can run in one super-step and both write a field
/// (`trellis_graph::same_step_writes`, a subgraph node writing what its child graph in this file
/// does), a `const` that fails when that field's reducer overwrites, placed at a `writes` entry
/// of the pair, and one marking the other node. Only the derive knows reducers, so the compiler
/// decides.
pub(super) fn same_step_checks(
    code: &mut Lines<'_>,
    blueprint: &Blueprint,
    module_graphs: &[Blueprint],
    spans: &GraphSpans,
    defining: &[usize],
    krate: &str,
    paths: &mut Paths<'_>,
) {
    if blueprint.state.is_none() {
        return;
    }
    let state_path = blueprint.state.as_deref().unwrap_or("State");
    let sets = WriteSets::in_file(blueprint, module_graphs);
    // One check a field: its reducer combines or not, whichever pair meets; the first pair
    // names it (a wide fork makes many pairs of one field).
    let mut checked: Vec<String> = Vec::new();
    for (check, pair) in trellis_graph::same_step_writes(blueprint, &sets)
        .into_iter()
        .enumerate()
    {
        if checked.contains(&pair.field) {
            continue;
        }
        let (Some(first), Some(second)) = (
            Writer::of(blueprint, spans, defining, pair.first, &pair.field),
            Writer::of(blueprint, spans, defining, pair.second, &pair.field),
        ) else {
            continue;
        };
        // The field's position, from a `writes` entry's `const`. Two subgraph nodes on this
        // state in one step are E0218's, which the language reports before any code is written.
        let Some(index) = first.index.clone().or_else(|| second.index.clone()) else {
            continue;
        };
        checked.push(pair.field.clone());
        let place =
            |at: Option<trellis_dsl::Span>| at.map(|at| code.located(at)).unwrap_or_default();
        let (first_place, second_place) = (place(first.span), place(second.span));
        // In pieces, one a line: a build script's lines stay short enough for rustc to quote.
        let mut pieces =
            pair.message_pieces(blueprint, [&first_place, &second_place], Some(state_path));
        pieces[0].insert_str(0, "E0214: ");
        pieces.push(" (a conflict);".to_owned());
        pieces.push(format!(" {}", pair.help()));
        let name = format!("__SAME_STEP_{check}");
        code.boundary();
        put!(code, "const {name}: &str = ::core::concat!(");
        for piece in &pieces {
            put!(code, "{},", Lit(piece));
        }
        put!(code, ");");
        // At the second node's `writes` entry, or the first's when the second is a subgraph
        // node.
        let sides = [(pair.first, &first), (pair.second, &second)];
        let primary = if second.index.is_some() { 1 } else { 0 };
        let must_combine = |message: &str| {
            format!(
                "{krate}::__private::must_combine(<State as {krate}::writes::Field<{{ {index} }}>>::COMBINES, {message})"
            )
        };
        let fails = paths.place_at(&must_combine(&name), sides[primary].1.span);
        put!(code, "const _: () = {fails};");
        // The other writer's place is marked too, as `graph!` marks each label of the
        // language's errors: the editor underlines both.
        let (other, writer) = sides[1 - primary];
        if pair.first != pair.second {
            let place = [&first_place, &second_place][1 - primary];
            let label = format!("E0214: {}", pair.other_writer(blueprint, other, place));
            let label_name = format!("{name}_OTHER");
            put!(code, "const {label_name}: &str = {};", Lit(&label));
            let fails = paths.place_at(&must_combine(&label_name), writer.span);
            put!(code, "const _: () = {fails};");
        }
    }
}

/// One node of an E0214 pair, as generated code names it.
struct Writer {
    /// Its `writes` entry for the field; a subgraph node's `graph`.
    span: Option<trellis_dsl::Span>,
    /// The `const` holding the field's position, for a node with `writes`.
    index: Option<String>,
}

impl Writer {
    /// `None` for a node whose `writes` has no update type (a name that is no identifier).
    fn of(
        blueprint: &Blueprint,
        spans: &GraphSpans,
        defining: &[usize],
        at: usize,
        field: &str,
    ) -> Option<Writer> {
        let node = blueprint.nodes.get(at)?;
        let spans = spans.nodes.get(at);
        if node.graph.is_some() {
            return Some(Writer {
                span: spans.and_then(|s| s.graph),
                index: None,
            });
        }
        let first = *defining.get(at).filter(|&&first| first != usize::MAX)?;
        let k = node.writes.as_deref()?.iter().position(|f| f == field)?;
        Some(Writer {
            span: spans.and_then(|s| s.writes.get(k).copied()),
            index: Some(format!("__WRITES_{first}_{k}")),
        })
    }
}
