//! `#[derive(GraphState)]`: per-field reducers and the update type they merge.

use crate::answers::{Answer, answer_of, apply_resume};
use crate::serde_attrs::{self, FieldShape};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, Ident, Path, PathArguments, Type};

/// How one field merges the updates of a super-step.
pub(crate) enum Reducer {
    Overwrite,
    Append(Type),
    Extend,
    Sum,
    With(Path),
}

pub(crate) struct Field<'a> {
    pub(crate) name: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) reducer: Reducer,
    /// How the update serializes it, following the state's serde attributes.
    shape: FieldShape,
    /// The field's own documentation, which the update's field repeats (and its schema shows).
    docs: Vec<&'a syn::Attribute>,
}

/// Collects every error of the input before reporting, so one build shows all of them.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let mut krate: Path = syn::parse_quote!(::trellis);
    let mut update = format_ident!("{}Update", input.ident);
    let mut schema = false;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("graph_state"))
    {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let text: syn::LitStr = meta.value()?.parse()?;
                krate = text.parse()?;
                Ok(())
            } else if meta.path.is_ident("update") {
                update = meta.value()?.parse()?;
                Ok(())
            } else if meta.path.is_ident("schema") {
                schema = true;
                Ok(())
            } else {
                let given = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                let hint = trellis_graph::did_you_mean(&given, ["update", "crate", "schema"])
                    .map(|known| format!("did you mean `{known}`? "))
                    .unwrap_or_default();
                Err(meta.error(format!(
                    "unknown graph_state option `{given}`; {hint}expected `update = Name`, `crate = \"path\"` or `schema`"
                )))
            }
        });
        if let Err(error) = parsed {
            errors.push(error);
        }
    }

    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => Some(&fields.named),
            other => {
                errors.push(syn::Error::new(
                    other.span(),
                    "GraphState needs named fields: each field gets its own reducer",
                ));
                None
            }
        },
        Data::Enum(data) => {
            errors.push(syn::Error::new(
                data.enum_token.span,
                "GraphState cannot be derived for an enum; implement `WholeState` for it instead",
            ));
            None
        }
        Data::Union(data) => {
            errors.push(syn::Error::new(
                data.union_token.span,
                "GraphState cannot be derived for a union",
            ));
            None
        }
    };
    let mut fields = Vec::new();
    let mut answers: Vec<Answer<'_>> = Vec::new();
    for field in named.into_iter().flatten() {
        let Some(name) = &field.ident else { continue };
        let reducer = match reducer_of(field) {
            Ok(reducer) => reducer,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        if let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("answer")) {
            match answer_of(field, attr, &reducer, &answers) {
                Ok(input) => answers.push(Answer { name, input }),
                Err(error) => errors.push(error),
            }
        }
        fields.push(Field {
            name,
            ty: &field.ty,
            reducer,
            shape: serde_attrs::field_shape(&field.attrs),
            docs: field
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc"))
                .collect(),
        });
    }
    if let Some(error) = errors.0 {
        return Err(error);
    }
    let deltas = input.generics.params.is_empty()
        && serde_attrs::plain_json(
            &input.attrs,
            named.into_iter().flatten().map(|field| &field.attrs[..]),
        );
    let mut tokens = generate(input, &krate, &update, &fields, schema, deltas);
    tokens.extend(crate::fields::expand(input, &krate, &fields));
    if !answers.is_empty() {
        tokens.extend(apply_resume(input, &krate, &update, &answers, schema));
    }
    Ok(tokens)
}

fn reducer_of(field: &syn::Field) -> syn::Result<Reducer> {
    let mut reducer = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("reducer")) {
        attr.parse_nested_meta(|meta| {
            if reducer.is_some() {
                return Err(meta.error("a field has one reducer; remove this one"));
            }
            let chosen = if meta.path.is_ident("overwrite") {
                Reducer::Overwrite
            } else if meta.path.is_ident("append") {
                Reducer::Append(vec_item(&field.ty).ok_or_else(|| {
                    syn::Error::new(
                        field.ty.span(),
                        "`append` needs a `Vec<T>` field; use `extend` for other collections",
                    )
                })?)
            } else if meta.path.is_ident("extend") {
                Reducer::Extend
            } else if meta.path.is_ident("sum") {
                Reducer::Sum
            } else if meta.path.is_ident("with") {
                Reducer::With(meta.value()?.parse()?)
            } else {
                let given = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                let hint = trellis_graph::did_you_mean(&given, REDUCERS.iter().copied())
                    .map(|known| format!("did you mean `{known}`? "))
                    .unwrap_or_default();
                return Err(meta.error(format!(
                    "unknown reducer `{given}`; {hint}expected `overwrite`, `append`, `extend`, `sum` or `with = path`"
                )));
            };
            reducer = Some(chosen);
            Ok(())
        })?;
    }
    Ok(reducer.unwrap_or(Reducer::Overwrite))
}

const REDUCERS: &[&str] = &["overwrite", "append", "extend", "sum", "with"];

/// `T` of a field written `Vec<T>` (or `…::Vec<T>`).
fn vec_item(ty: &Type) -> Option<Type> {
    wrapped_in(ty, "Vec")
}

/// `T` of a type written `Wrapper<T>` (or `…::Wrapper<T>`).
pub(crate) fn wrapped_in(ty: &Type, wrapper: &str) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(item) if args.args.len() == 1 => Some(item.clone()),
        _ => None,
    }
}

fn generate(
    input: &DeriveInput,
    krate: &Path,
    update: &Ident,
    fields: &[Field<'_>],
    schema: bool,
    deltas: bool,
) -> TokenStream {
    let state = &input.ident;
    let vis = &input.vis;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let generics = &input.generics;
    // The update derives `Serialize` through the runtime's serde, so that a state's crate needs
    // no serde features of its own for it; `serde(crate)` takes the path as a string.
    let serde_root = quote!(#krate::__private).to_string().replace(' ', "");
    let serde_crate = format!("{serde_root}::serde");
    let container_serde = serde_attrs::container_attrs(&input.attrs);

    let update_fields = fields.iter().map(|f| {
        let (name, ty) = (f.name, f.ty);
        let (doc, field_ty) = match &f.reducer {
            Reducer::Overwrite => (
                "Replaces the field; two nodes replacing it in one super-step conflict.",
                quote!(::core::option::Option<#ty>),
            ),
            Reducer::Append(_) => (
                "Items appended to the field, in declaration order of the nodes.",
                quote!(#ty),
            ),
            Reducer::Extend => ("Items added to the field.", quote!(#ty)),
            Reducer::Sum => ("Added to the field.", quote!(::core::option::Option<#ty>)),
            Reducer::With(_) => (
                "Folded into the field by its reducer function.",
                quote!(::core::option::Option<#ty>),
            ),
        };
        // An update shows what it changes: a field it leaves alone is left out of its JSON.
        let skip = match &f.reducer {
            Reducer::Overwrite | Reducer::Sum | Reducer::With(_) => {
                Some("::core::option::Option::is_none".to_owned())
            }
            Reducer::Append(_) => Some(format!("{serde_root}::reducers::is_empty")),
            Reducer::Extend => None,
        }
        .map(|path| quote!(#[serde(skip_serializing_if = #path)]));
        // Read back (a parent keeps its updates while a subgraph on its state waits) with a
        // field it left out empty.
        let shape = match &f.shape {
            FieldShape::Named(None) => quote!(#skip #[serde(default)]),
            FieldShape::Named(Some(rename)) => {
                quote!(#skip #[serde(default, rename = #rename)])
            }
            FieldShape::Skipped => quote!(#[serde(skip)]),
        };
        let docs = &f.docs;
        let separator = (!docs.is_empty()).then(|| quote!(#[doc = ""]));
        quote! { #(#docs)* #separator #[doc = #doc] #shape #vis #name: #field_ty }
    });
    let defaults = fields.iter().map(|f| {
        let name = f.name;
        match f.reducer {
            Reducer::Append(_) | Reducer::Extend => {
                quote!(#name: ::core::default::Default::default())
            }
            _ => quote!(#name: ::core::option::Option::None),
        }
    });
    let extend_bounds: Vec<TokenStream> = fields
        .iter()
        .filter(|f| matches!(f.reducer, Reducer::Extend))
        .map(|f| {
            let ty = f.ty;
            quote!(#ty: ::core::default::Default)
        })
        .collect();
    let default_where = match (where_clause, extend_bounds.is_empty()) {
        (None, true) => quote!(),
        (None, false) => quote!(where #(#extend_bounds,)*),
        (Some(clause), _) => {
            let predicates = &clause.predicates;
            quote!(where #predicates, #(#extend_bounds,)*)
        }
    };
    let setters = fields.iter().map(|f| {
        let (name, ty) = (f.name, f.ty);
        match &f.reducer {
            Reducer::Overwrite => quote! {
                #[doc = concat!("Replaces `", stringify!(#name), "`.")]
                #[must_use]
                #vis fn #name(mut self, value: impl ::core::convert::Into<#ty>) -> Self {
                    self.#name = ::core::option::Option::Some(value.into());
                    self
                }
            },
            Reducer::Append(item) => quote! {
                #[doc = concat!("Appends one item to `", stringify!(#name), "`.")]
                #[must_use]
                #vis fn #name(mut self, item: impl ::core::convert::Into<#item>) -> Self {
                    self.#name.push(item.into());
                    self
                }
            },
            Reducer::Extend => quote! {
                #[doc = concat!("Adds items to `", stringify!(#name), "`.")]
                #[must_use]
                #vis fn #name<I: ::core::iter::IntoIterator>(mut self, items: I) -> Self
                where
                    #ty: ::core::iter::Extend<I::Item>,
                {
                    self.#name.extend(items);
                    self
                }
            },
            Reducer::Sum => quote! {
                #[doc = concat!("Adds to `", stringify!(#name), "`.")]
                #[must_use]
                #vis fn #name(mut self, value: #ty) -> Self {
                    self.#name = ::core::option::Option::Some(match self.#name.take() {
                        ::core::option::Option::Some(mut sum) => {
                            <#ty as ::core::ops::AddAssign>::add_assign(&mut sum, value);
                            sum
                        }
                        ::core::option::Option::None => value,
                    });
                    self
                }
            },
            Reducer::With(_) => quote! {
                #[doc = concat!("Folds `value` into `", stringify!(#name), "`.")]
                #[must_use]
                #vis fn #name(mut self, value: #ty) -> Self {
                    self.#name = ::core::option::Option::Some(value);
                    self
                }
            },
        }
    });
    let overwrites: Vec<&Ident> = fields
        .iter()
        .filter(|f| matches!(f.reducer, Reducer::Overwrite))
        .map(|f| f.name)
        .collect();
    let conflicts = (!overwrites.is_empty()).then(|| {
        let writers: Vec<Ident> = overwrites
            .iter()
            .map(|name| format_ident!("__writer_{}", name))
            .collect();
        quote! {
            #(let mut #writers: ::core::option::Option<&str> = ::core::option::Option::None;)*
            for (node, update) in &updates {
                #(
                    if update.#overwrites.is_some() {
                        #krate::__private::reducers::claim(&mut #writers, node, stringify!(#overwrites))?;
                    }
                )*
            }
        }
    });
    let folds = fields.iter().map(|f| {
        let (name, ty) = (f.name, f.ty);
        let span = f.ty.span();
        match &f.reducer {
            Reducer::Overwrite => quote! {
                if let ::core::option::Option::Some(value) = update.#name {
                    self.#name = value;
                }
            },
            Reducer::Append(_) | Reducer::Extend => quote_spanned! {span=>
                ::core::iter::Extend::extend(&mut self.#name, update.#name);
            },
            // Spelled out so that a type without `AddAssign` is reported at the field's type.
            Reducer::Sum => quote_spanned! {span=>
                if let ::core::option::Option::Some(value) = update.#name {
                    <#ty as ::core::ops::AddAssign>::add_assign(&mut self.#name, value);
                }
            },
            Reducer::With(path) => quote! {
                if let ::core::option::Option::Some(value) = update.#name {
                    #path(&mut self.#name, value);
                }
            },
        }
    });
    // A run's input is folded like an update: only a function reducer can make it differ
    // from the value given (an empty collection extended by the input is the input), so only
    // those fields are folded, each into its type's default (spanned so that a type without
    // `Default` is reported at the field's type).
    let fold_input = fields
        .iter()
        .any(|f| matches!(f.reducer, Reducer::With(_)))
        .then(|| {
            let moved = fields.iter().map(|f| {
                let (name, ty) = (f.name, f.ty);
                match &f.reducer {
                    Reducer::With(path) => quote_spanned! {ty.span()=>
                        #name: {
                            let mut folded = <#ty as ::core::default::Default>::default();
                            #path(&mut folded, self.#name);
                            folded
                        }
                    },
                    _ => quote!(#name: self.#name),
                }
            });
            quote! {
                fn fold_input(self) -> Self {
                    Self { #(#moved,)* }
                }
            }
        });
    // Through the runtime's schemars (feature `schema`), which reads the serde attributes above.
    let (derive_schema, schemas) = if schema {
        let schemars_crate = format!("{serde_root}::schemars");
        (
            quote! {
                #[derive(#krate::__private::schemars::JsonSchema)]
                #[schemars(crate = #schemars_crate)]
            },
            quote! {
                fn schemas() -> ::core::option::Option<#krate::schema::StateSchemas> {
                    ::core::option::Option::Some(#krate::schema::StateSchemas {
                        state: #krate::__private::schema_of::<Self>(),
                        update: #krate::__private::schema_of::<Self::Update>(),
                    })
                }
            },
        )
    } else {
        (quote!(), quote!())
    };
    let changes = deltas.then(|| changes(krate, &serde_crate, &container_serde, fields));
    let fields = crate::fields::listed(fields);
    let update_doc = format!(
        "Changes to [`{state}`] that a node returns; the super-step's changes are merged field \
         by field by each field's reducer."
    );
    quote! {
        #[doc = #update_doc]
        #[derive(
            ::core::clone::Clone,
            #krate::__private::serde::Serialize,
            #krate::__private::serde::Deserialize,
        )]
        #derive_schema
        #[serde(crate = #serde_crate)]
        // The state's own bounds (a `GraphState` is `DeserializeOwned`) are what reading needs.
        #[serde(bound(deserialize = ""))]
        #container_serde
        #vis struct #update #generics #where_clause {
            #(#update_fields,)*
        }

        #[automatically_derived]
        impl #impl_generics ::core::default::Default for #update #ty_generics #default_where {
            fn default() -> Self {
                Self { #(#defaults,)* }
            }
        }

        impl #impl_generics #update #ty_generics #where_clause {
            #(#setters)*
        }

        impl #impl_generics #state #ty_generics #where_clause {
            /// Folds one update in, field by field; conflicts were checked by the caller.
            #[doc(hidden)]
            #[inline]
            fn __trellis_fold(&mut self, update: #update #ty_generics) {
                #(#folds)*
            }
        }

        #[automatically_derived]
        impl #impl_generics #krate::GraphState for #state #ty_generics #where_clause {
            type Update = #update #ty_generics;

            fn apply(
                &mut self,
                updates: ::std::vec::Vec<(&str, Self::Update)>,
            ) -> ::core::result::Result<(), #krate::error::MergeConflict> {
                #conflicts
                for (_, update) in updates {
                    self.__trellis_fold(update);
                }
                ::core::result::Result::Ok(())
            }

            fn apply_one(
                &mut self,
                _node: &str,
                update: Self::Update,
            ) -> ::core::result::Result<(), #krate::error::MergeConflict> {
                self.__trellis_fold(update);
                ::core::result::Result::Ok(())
            }

            #fold_input

            #changes

            #schemas

            #fields
        }
    }
}

/// `GraphState::changes`: what a step's updates changed, as two views of the state that serde
/// writes with the state's own names (its renames and `rename_all`), holding only the fields
/// the updates wrote: one of the new values of the fields they replaced, one of the items they
/// appended.
fn changes(
    krate: &Path,
    serde_crate: &str,
    container_serde: &TokenStream,
    fields: &[Field<'_>],
) -> TokenStream {
    let kept = || {
        fields.iter().filter_map(|f| match &f.shape {
            FieldShape::Named(rename) => Some((f, rename.as_ref().map(|r| quote!(rename = #r,)))),
            FieldShape::Skipped => None,
        })
    };
    let view = |name: &str, entries: Vec<TokenStream>, values: Vec<TokenStream>| {
        if entries.is_empty() {
            return quote!(#krate::__private::serde_json::Map::new());
        }
        let view = format_ident!("{}", name);
        quote! {{
            #[derive(#krate::__private::serde::Serialize)]
            #[serde(crate = #serde_crate)]
            #container_serde
            struct #view<'__trellis> { #(#entries,)* }
            #krate::__private::delta::object(&#view { #(#values,)* })?
        }}
    };
    let (mut set_entries, mut set_values) = (Vec::new(), Vec::new());
    let (mut append_entries, mut append_values) = (Vec::new(), Vec::new());
    let (mut length_entries, mut length_values, mut checks) = (Vec::new(), Vec::new(), Vec::new());
    for (f, rename) in kept() {
        let (name, ty) = (f.name, f.ty);
        let skip =
            quote!(#[serde(#rename skip_serializing_if = "::core::option::Option::is_none")]);
        match &f.reducer {
            // A list folded by a function that appends or replaces by id (`add_messages`): its
            // new items when it grew by as many as it was given, else its whole value.
            Reducer::With(path) if vec_item(ty).is_some() => {
                let item = vec_item(ty);
                let (given, appended) = (
                    format_ident!("__trellis_given_{}", name),
                    format_ident!("__trellis_appended_{}", name),
                );
                checks.push(quote! {
                    let #given: usize = updates
                        .iter()
                        .filter_map(|(_, update)| update.#name.as_ref())
                        .map(::std::vec::Vec::len)
                        .sum();
                    let #appended = updates.iter().any(|(_, update)| update.#name.is_some())
                        && #krate::__private::delta::appends_or_replaces(&#path)
                        && #given <= self.#name.len();
                });
                set_entries.push(quote!(#skip #name: ::core::option::Option<&'__trellis #ty>));
                set_values.push(quote! {
                    #name: (!#appended && updates.iter().any(|(_, update)| update.#name.is_some()))
                        .then_some(&self.#name)
                });
                append_entries
                    .push(quote!(#skip #name: ::core::option::Option<&'__trellis [#item]>));
                append_values.push(quote! {
                    #name: #appended.then(|| &self.#name[self.#name.len() - #given..])
                });
                length_entries.push(quote!(#skip #name: ::core::option::Option<&'__trellis usize>));
                length_values.push(quote!(#name: #appended.then_some(&self.#name.len())));
            }
            Reducer::Append(item) => {
                append_entries.push(
                    quote!(#skip #name: ::core::option::Option<::std::vec::Vec<&'__trellis #item>>),
                );
                append_values.push(quote! {
                    #name: {
                        let items: ::std::vec::Vec<&#item> =
                            updates.iter().flat_map(|(_, update)| update.#name.iter()).collect();
                        (!items.is_empty()).then_some(items)
                    }
                });
            }
            reducer => {
                let wrote = match reducer {
                    Reducer::Extend => quote!(#krate::__private::delta::adds(&update.#name)),
                    _ => quote!(update.#name.is_some()),
                };
                set_entries.push(quote!(#skip #name: ::core::option::Option<&'__trellis #ty>));
                set_values.push(quote! {
                    #name: updates.iter().any(|(_, update)| #wrote).then_some(&self.#name)
                });
            }
        }
    }
    let set = view("__TrellisSet", set_entries, set_values);
    let append = view("__TrellisAppend", append_entries, append_values);
    let lengths = view("__TrellisLengths", length_entries, length_values);
    quote! {
        fn changes(
            &self,
            updates: &[(&str, Self::Update)],
        ) -> ::core::result::Result<
            ::core::option::Option<#krate::checkpoint::StateChanges>,
            #krate::__private::serde_json::Error,
        > {
            #(#checks)*
            ::core::result::Result::Ok(::core::option::Option::Some(
                #krate::__private::delta::changes(#set, #append, #lengths),
            ))
        }
    }
}
