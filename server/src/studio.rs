//! The studio: one page, embedded in the binary with the Mermaid build it draws graphs with
//! (vendored, so nothing is fetched from elsewhere at run time). Static: every piece of data it
//! shows comes from the API, under the API's token.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

const PAGE: &str = include_str!("../studio/index.html");
/// Mermaid 11.17.2, MIT (`studio/vendor/mermaid-LICENSE`).
const MERMAID: &str = include_str!("../studio/vendor/mermaid-11.17.2.min.js");

pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
            }),
        )
        .route(
            "/studio/mermaid.min.js",
            get(|| async {
                let headers = [
                    (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                    (header::CACHE_CONTROL, "public, max-age=86400"),
                ];
                (headers, MERMAID).into_response()
            }),
        )
}
