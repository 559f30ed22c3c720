//! What of the state's `#[serde(...)]` attributes its update keeps, so that an update's JSON
//! names fields as the state's does.

use proc_macro2::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Lit, LitStr, Meta, Token};

/// How one field of the update is serialized.
pub(crate) enum FieldShape {
    /// Under this name (the state's `rename`), or its own.
    Named(Option<LitStr>),
    /// Left out: the state skips the field, or writes it with a function of its own (which
    /// takes the field's type, not the update's).
    Skipped,
}

/// The `#[serde(...)]` attributes of a state field, as its update field needs them.
pub(crate) fn field_shape(attrs: &[Attribute]) -> FieldShape {
    let mut rename = None;
    for meta in serde_metas(attrs) {
        let path = meta.path();
        if ["skip", "skip_serializing", "with", "serialize_with"]
            .iter()
            .any(|word| path.is_ident(word))
        {
            return FieldShape::Skipped;
        }
        if path.is_ident("rename") {
            rename = serialize_name(&meta).or(rename);
        }
    }
    FieldShape::Named(rename)
}

/// The state's `rename_all` (for serializing), for the update struct.
pub(crate) fn container_attrs(attrs: &[Attribute]) -> TokenStream {
    serde_metas(attrs)
        .iter()
        .filter(|meta| meta.path().is_ident("rename_all"))
        .filter_map(serialize_name)
        .map(|rule| quote!(#[serde(rename_all = #rule)]))
        .collect()
}

/// Whether serde writes the state as a JSON object with one field per kept field, named as the
/// update names it and written as its type writes itself: what a delta checkpoint's changes
/// rely on (see `GraphState::changes`). Any attribute not known to keep that shape says no.
pub(crate) fn plain_json<'a>(
    container: &[Attribute],
    mut fields: impl Iterator<Item = &'a [Attribute]>,
) -> bool {
    const CONTAINER: &[&str] = &[
        "rename_all",
        "rename",
        "deny_unknown_fields",
        "default",
        "bound",
        "crate",
        "tag",
        "expecting",
    ];
    const FIELD: &[&str] = &[
        "rename",
        "alias",
        "default",
        "skip",
        "skip_serializing",
        "skip_deserializing",
        "deserialize_with",
        "bound",
        "borrow",
    ];
    let known = |attrs: &[Attribute], words: &[&str]| {
        serde_metas(attrs)
            .iter()
            .all(|meta| words.iter().any(|word| meta.path().is_ident(word)))
    };
    known(container, CONTAINER) && fields.all(|attrs| known(attrs, FIELD))
}

/// Every item of every `#[serde(...)]`; one serde cannot read is serde's to report.
fn serde_metas(attrs: &[Attribute]) -> Vec<Meta> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .filter_map(|attr| {
            attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .ok()
        })
        .flatten()
        .collect()
}

/// `name = "x"` or `name(serialize = "x", …)`: the `x` used when serializing.
fn serialize_name(meta: &Meta) -> Option<LitStr> {
    match meta {
        Meta::NameValue(pair) => string(&pair.value),
        Meta::List(list) => list
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .ok()?
            .into_iter()
            .find_map(|inner| match inner {
                Meta::NameValue(pair) if pair.path.is_ident("serialize") => string(&pair.value),
                _ => None,
            }),
        Meta::Path(_) => None,
    }
}

fn string(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Some(text.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(attrs: TokenStream) -> FieldShape {
        let field: syn::Field =
            syn::parse::Parser::parse2(syn::Field::parse_named, attrs).expect("a named field");
        field_shape(&field.attrs)
    }

    fn named(shape: FieldShape) -> Option<String> {
        match shape {
            FieldShape::Named(name) => name.map(|n| n.value()),
            FieldShape::Skipped => panic!("kept, not skipped"),
        }
    }

    #[test]
    fn skips_what_the_state_skips_or_writes_its_own_way() {
        for attrs in [
            quote!(#[serde(skip)] a: u8),
            quote!(#[serde(default, skip_serializing)] a: u8),
            quote!(#[serde(with = "my_format")] a: u8),
            quote!(#[serde(serialize_with = "f")] a: u8),
        ] {
            assert!(matches!(field(attrs), FieldShape::Skipped));
        }
    }

    #[test]
    fn keeps_the_state_s_names() {
        assert_eq!(named(field(quote!(a: u8))), None);
        assert_eq!(named(field(quote!(#[serde(default)] a: u8))), None);
        assert_eq!(
            named(field(quote!(#[serde(rename = "b")] a: u8))),
            Some("b".to_owned())
        );
        assert_eq!(
            named(field(
                quote!(#[serde(rename(deserialize = "x", serialize = "c"))] a: u8)
            )),
            Some("c".to_owned())
        );
    }

    #[test]
    fn only_attributes_that_keep_fields_named_and_whole_allow_deltas() {
        let container: syn::DeriveInput = syn::parse_quote!(
            #[serde(rename_all = "camelCase", deny_unknown_fields)]
            struct S;
        );
        let plain: syn::Field = syn::parse_quote!(#[serde(rename = "b", default)] a: u8);
        let skipped: syn::Field = syn::parse_quote!(#[serde(skip)] a: u8);
        assert!(plain_json(
            &container.attrs,
            [&plain.attrs[..], &skipped.attrs[..]].into_iter()
        ));
        for field in [
            quote!(#[serde(with = "f")] a: u8),
            quote!(#[serde(serialize_with = "f")] a: u8),
            quote!(#[serde(skip_serializing_if = "Vec::is_empty")] a: Vec<u8>),
            quote!(#[serde(flatten)] a: Inner),
        ] {
            let field: syn::Field =
                syn::parse::Parser::parse2(syn::Field::parse_named, field).expect("a named field");
            assert!(!plain_json(&[], [&field.attrs[..]].into_iter()));
        }
        for container in [
            quote!(
                #[serde(into = "Other")]
                struct S;
            ),
            quote!(
                #[serde(transparent)]
                struct S;
            ),
        ] {
            let input: syn::DeriveInput = syn::parse2(container).unwrap();
            assert!(!plain_json(&input.attrs, std::iter::empty()));
        }
    }

    #[test]
    fn keeps_the_state_s_rename_all() {
        let input: syn::DeriveInput = syn::parse_quote!(
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct S;
        );
        assert_eq!(
            container_attrs(&input.attrs).to_string(),
            quote!(#[serde(rename_all = "camelCase")]).to_string()
        );
    }
}
