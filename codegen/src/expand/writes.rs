//! A node's own update type when it declares `writes` (`node web { writes notes, sources; }`):
//! `WebWrites`, with a setter for each field named and no other, so that setting another field
//! does not compile. Each setter writes through `trellis::writes::SetField<I, V>`, the field's
//! position found from its name by a `const` placed at the `writes` entry: an entry naming no
//! field of the state is a compile error there.

use trellis_dsl::{Blueprint, GraphSpans};

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
) {
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
                    "node `{id}` writes `{field}`, but the state `{state_path}` has no field `{field}`{}",
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
}
