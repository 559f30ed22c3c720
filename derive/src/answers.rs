//! `#[answer]`: the fields a person's answers to pauses are stored in, one per answer type, and
//! the `ApplyResume` and `TakesAnswer<T>` impls that store them there.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Path, Type};

use crate::graph_state::{Reducer, wrapped_in};

/// A field `#[answer]` marks: a person's answer of its type to a pause is stored there.
pub(crate) struct Answer<'a> {
    pub(crate) name: &'a Ident,
    /// `T` of the field's `Option<T>`: what a resume takes.
    pub(crate) input: Type,
}

/// The answer type of an `#[answer]` field, or why the field cannot be one.
pub(crate) fn answer_of(
    field: &syn::Field,
    attr: &syn::Attribute,
    reducer: &Reducer,
    before: &[Answer<'_>],
) -> syn::Result<Type> {
    if !matches!(attr.meta, syn::Meta::Path(_)) {
        return Err(syn::Error::new(
            attr.span(),
            "write `#[answer]`, with no arguments",
        ));
    }
    if !matches!(reducer, Reducer::Overwrite) {
        return Err(syn::Error::new(
            attr.meta.span(),
            "the answer replaces the field: an `#[answer]` field takes no reducer",
        ));
    }
    let ty = wrapped_in(&field.ty, "Option").ok_or_else(|| {
        syn::Error::new(
            field.ty.span(),
            "an `#[answer]` field is an `Option<T>` (`Option<trellis::interrupt::Decision>` for approvals): \
             it is empty until a person answers",
        )
    })?;
    // Answers are told apart by their type: two fields of one type could not be.
    let spelled = ty.to_token_stream().to_string();
    if let Some(other) = before
        .iter()
        .find(|answer| answer.input.to_token_stream().to_string() == spelled)
    {
        return Err(syn::Error::new(
            attr.meta.span(),
            format!(
                "`{}` already receives answers of this type: each `#[answer]` field has a type of its own",
                other.name
            ),
        ));
    }
    Ok(ty)
}

/// `ApplyResume` and `TakesAnswer`: an answer goes into the `#[answer]` field of its type. With
/// one such field the answer is of its type; with several, a `Reply` of any of them.
pub(crate) fn apply_resume(
    input: &DeriveInput,
    krate: &Path,
    update: &Ident,
    answers: &[Answer<'_>],
    schema: bool,
) -> TokenStream {
    let state = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let types: Vec<&Type> = answers.iter().map(|answer| &answer.input).collect();
    let answer_schema = schema.then(|| {
        let schema = match types.as_slice() {
            [one] => quote! { #krate::__private::schema_of::<#one>() },
            _ => quote! {
                #krate::__private::serde_json::json!({
                    "anyOf": [#(#krate::__private::schema_of::<#types>()),*]
                })
            },
        };
        quote! {
            fn answer_schema() -> ::core::option::Option<#krate::__private::serde_json::Value> {
                ::core::option::Option::Some(#schema)
            }
        }
    });
    let new_update = quote! { <#update #ty_generics as ::core::default::Default>::default() };
    let reply = quote! { #krate::interrupt::Reply };
    let body = match answers {
        [one] => {
            let (name, ty) = (one.name, &one.input);
            quote! {
                type Input = #ty;

                fn apply_resume(&self, _: &#krate::interrupt::Interrupt, answer: #ty) -> #update #ty_generics {
                    let mut update = #new_update;
                    update.#name = ::core::option::Option::Some(::core::option::Option::Some(answer));
                    update
                }
            }
        }
        _ => {
            let names = answers.iter().map(|answer| answer.name);
            quote! {
                type Input = #reply;

                fn apply_resume(&self, _: &#krate::interrupt::Interrupt, answer: #reply) -> #update #ty_generics {
                    let mut update = #new_update;
                    #(
                        let answer = match answer.take::<#types>() {
                            ::core::result::Result::Ok(answer) => {
                                update.#names = ::core::option::Option::Some(::core::option::Option::Some(answer));
                                return update;
                            }
                            ::core::result::Result::Err(answer) => answer,
                        };
                    )*
                    // Of none of the state's types: refused before it gets here (`takes`).
                    let _ = answer;
                    update
                }

                fn takes(answer: &#reply) -> bool {
                    #(answer.is::<#types>())||*
                }
            }
        }
    };
    let takes = types.iter().map(|ty| {
        let site_schema = schema.then(|| {
            quote! {
                fn schema() -> ::core::option::Option<#krate::__private::serde_json::Value> {
                    ::core::option::Option::Some(#krate::__private::schema_of::<#ty>())
                }
            }
        });
        let (into, is) = if answers.len() == 1 {
            (quote! { answer }, quote! { true })
        } else {
            (
                quote! { #reply::new(answer) },
                quote! { answer.is::<#ty>() },
            )
        };
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::interrupt::TakesAnswer<#ty> for #state #ty_generics #where_clause {
                fn input_of(answer: #ty) -> <Self as #krate::interrupt::ApplyResume>::Input {
                    #into
                }

                fn is_answer(answer: &<Self as #krate::interrupt::ApplyResume>::Input) -> bool {
                    let _ = answer;
                    #is
                }

                #site_schema
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::interrupt::ApplyResume for #state #ty_generics #where_clause {
            #body

            #answer_schema
        }

        #(#takes)*
    }
}
