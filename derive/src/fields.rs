//! `trellis::writes::{Fields, Field, SetField}`: the state's fields by name and position,
//! through which code generated for a node's `writes` sets only those fields, each as the
//! update's own setter does.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::{DeriveInput, Path};

use crate::graph_state::{Field, Reducer};

/// `GraphState::fields`: each field's name and whether its reducer combines, for the
/// builder's `compile()` to check write sets against.
pub(crate) fn listed(fields: &[Field<'_>]) -> TokenStream {
    let each = fields.iter().map(|f| {
        let name = f.name.unraw().to_string();
        let combines = !matches!(f.reducer, Reducer::Overwrite);
        quote!((#name, #combines))
    });
    quote! {
        fn fields() -> ::core::option::Option<&'static [(&'static str, bool)]> {
            ::core::option::Option::Some(&[#(#each),*])
        }
    }
}

/// The impls, for a state without generic parameters: generated code names a field's position
/// in a `const`, which cannot depend on a generic parameter. (A generic state used with
/// `writes` is told so by `Fields`' `on_unimplemented`.)
pub(crate) fn expand(input: &DeriveInput, krate: &Path, fields: &[Field<'_>]) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let state = &input.ident;
    let names = fields.iter().map(|f| f.name.unraw().to_string());
    let each = fields.iter().enumerate().map(|(at, f)| {
        let (name, ty) = (f.name, f.ty);
        let combines = !matches!(f.reducer, Reducer::Overwrite);
        // Each as the update's setter takes it; `sum` and `with` by one impl, so that an
        // integer literal takes the field's type.
        let set = match &f.reducer {
            Reducer::Overwrite => quote! {
                impl<V: ::core::convert::Into<#ty>> #krate::writes::SetField<#at, V> for #state
            },
            Reducer::Append(item) => quote! {
                impl<V: ::core::convert::Into<#item>> #krate::writes::SetField<#at, V> for #state
            },
            Reducer::Extend => quote! {
                impl<V: ::core::iter::IntoIterator> #krate::writes::SetField<#at, V> for #state
                where
                    #ty: ::core::iter::Extend<V::Item>
            },
            Reducer::Sum | Reducer::With(_) => quote! {
                impl #krate::writes::SetField<#at, #ty> for #state
            },
        };
        let value = match &f.reducer {
            Reducer::Sum | Reducer::With(_) => quote!(#ty),
            _ => quote!(V),
        };
        quote! {
            #[automatically_derived]
            impl #krate::writes::Field<#at> for #state {
                const COMBINES: bool = #combines;
            }

            #[automatically_derived]
            #set {
                fn set(update: &mut Self::Update, value: #value) {
                    let taken = ::core::mem::take(update);
                    *update = taken.#name(value);
                }
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #krate::writes::Fields for #state {
            const NAMES: &'static [&'static str] = &[#(#names),*];
        }

        #(#each)*
    }
}
