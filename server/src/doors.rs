//! What a request must show to come in, before any route sees it: a `Host` that names this
//! server, an `Origin` (when a browser sends one) that is this server's or one allowed, and —
//! for a request that changes something — no body a web page on another site could send.
//!
//! Why: a loopback server without a token is reachable from any web page the person opens.
//! A page on `evil.example` whose name is made to resolve to 127.0.0.1 (DNS rebinding) talks to
//! the server as if from its own origin, and its requests name `evil.example` in `Host`; a
//! page on any site can send a "simple" cross-site POST (a form, or `text/plain`) without asking
//! the server first, which is enough to cancel or retry a run. The `Host` check stops the
//! first, the `Origin` and body-type checks the second.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::uri::Authority;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The names and origins a server accepts, besides its own address.
#[derive(Debug)]
pub(crate) struct Doors {
    /// The address the server listens on.
    pub(crate) addr: SocketAddr,
    /// More names for `Host` (`name` for any port, `name:port` for one), lower case.
    pub(crate) hosts: Vec<String>,
    /// More origins a browser may call from (`https://app.example`), lower case.
    pub(crate) origins: Vec<String>,
}

/// The body types a browser sends cross-site without asking first (a CORS "simple" request).
const SIMPLE_TYPES: [&str; 3] = [
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "text/plain",
];

pub(crate) async fn check(
    State(doors): State<Arc<Doors>>,
    request: Request,
    next: Next,
) -> Response {
    match doors.admit(&request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

impl Doors {
    fn admit(&self, request: &Request) -> Result<(), ApiError> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .or_else(|| request.uri().authority().map(ToString::to_string))
            .ok_or_else(|| ApiError::forbidden("the request names no host (`Host`)"))?;
        if !self.host_allowed(&host) {
            return Err(ApiError::forbidden(format!(
                "host `{host}` is not this server's: name {} (or allow another name with `--allow-host`)",
                self.own_names()
            )));
        }
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            if !self.origin_allowed(origin, &host) {
                return Err(ApiError::forbidden(format!(
                    "origin `{origin}` may not call this server: only its own pages may (allow another origin with `--allow-origin`)"
                )));
            }
        }
        let changes = !matches!(
            *request.method(),
            Method::GET | Method::HEAD | Method::OPTIONS
        );
        if changes && let Some(kind) = request.headers().get(header::CONTENT_TYPE) {
            let kind = kind.to_str().unwrap_or_default().to_ascii_lowercase();
            let essence = kind.split(';').next().unwrap_or_default().trim();
            if SIMPLE_TYPES.contains(&essence) {
                return Err(ApiError::unsupported_type(format!(
                    "a `{essence}` body is refused (any web page can send one): send JSON, `Content-Type: application/json`"
                )));
            }
        }
        Ok(())
    }

    /// Whether `host` (a `Host` header: `name` or `name:port`) names this server: its address,
    /// `localhost` when it listens on loopback, any address when it listens on all of them (an
    /// address cannot be rebound, a name can), or a name allowed.
    fn host_allowed(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<Authority>() else {
            return false;
        };
        let name = authority.host().to_ascii_lowercase();
        let port = authority.port_u16();
        let allowed = self.hosts.iter().any(|entry| {
            entry.parse::<Authority>().is_ok_and(|entry| {
                entry.host().eq_ignore_ascii_case(&name)
                    && entry
                        .port_u16()
                        .is_none_or(|entry_port| port.unwrap_or(80) == entry_port)
            })
        });
        if allowed {
            return true;
        }
        if port.unwrap_or(80) != self.addr.port() {
            return false;
        }
        let bound = self.addr.ip();
        match name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            Ok(ip) => {
                bound.is_unspecified() || ip == bound || (ip.is_loopback() && bound.is_loopback())
            }
            // Browsers and resolvers keep `localhost` and `*.localhost` on this machine.
            Err(_) => {
                (name == "localhost" || name.ends_with(".localhost"))
                    && (bound.is_loopback() || bound.is_unspecified())
            }
        }
    }

    /// Whether a browser page at `origin` may call: the server's own pages (the origin names
    /// the host the request names) or an origin allowed. `null` (a sandboxed or local page) is
    /// none of them.
    fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        let default_port = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        let (Ok(origin), Ok(host)) = (authority.parse::<Authority>(), host.parse::<Authority>())
        else {
            return false;
        };
        // Behind a proxy that ends TLS the host may come without the port the page used.
        origin.host().eq_ignore_ascii_case(host.host())
            && match host.port_u16() {
                Some(port) => origin.port_u16().unwrap_or(default_port) == port,
                None => origin.port_u16().is_none(),
            }
    }

    /// How to name this server, for the refusal.
    fn own_names(&self) -> String {
        let port = self.addr.port();
        let ip = self.addr.ip();
        if ip.is_loopback() {
            format!("`{}` or `localhost:{port}`", self.addr)
        } else if ip.is_unspecified() {
            format!("one of its addresses, with port {port}")
        } else {
            format!("`{}`", self.addr)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doors(addr: &str, hosts: &[&str], origins: &[&str]) -> Doors {
        Doors {
            addr: addr.parse().unwrap(),
            hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
            origins: origins.iter().map(|o| (*o).to_owned()).collect(),
        }
    }

    #[test]
    fn a_loopback_server_answers_to_its_address_and_localhost_only() {
        let doors = doors("127.0.0.1:8080", &[], &[]);
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "app.localhost:8080",
        ] {
            assert!(doors.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example:8080",
            "127.0.0.1:9090",
            "localhost",
            "10.0.0.5:8080",
            "127.0.0.1.evil.example:8080",
            "",
            "a b",
        ] {
            assert!(!doors.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn allowed_names_come_with_or_without_their_port() {
        let doors = doors(
            "127.0.0.1:8080",
            &["studio.internal", "proxy.example:443"],
            &[],
        );
        assert!(doors.host_allowed("studio.internal"));
        assert!(doors.host_allowed("studio.internal:3000"));
        assert!(doors.host_allowed("proxy.example:443"));
        assert!(!doors.host_allowed("proxy.example:444"));
        assert!(!doors.host_allowed("other.internal:8080"));
    }

    #[test]
    fn a_server_on_every_address_answers_to_any_address_but_no_name() {
        let doors = doors("0.0.0.0:8080", &[], &[]);
        assert!(doors.host_allowed("192.168.1.20:8080"));
        assert!(doors.host_allowed("localhost:8080"));
        assert!(!doors.host_allowed("evil.example:8080"));
        let public = self::doors("192.168.1.20:8080", &[], &[]);
        assert!(!public.host_allowed("localhost:8080"));
        assert!(!public.host_allowed("192.168.1.21:8080"));
    }

    #[test]
    fn only_the_server_s_own_pages_and_allowed_origins_may_call() {
        let doors = doors("127.0.0.1:8080", &[], &["https://app.example"]);
        assert!(doors.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080"));
        assert!(doors.origin_allowed("http://localhost:8080", "localhost:8080"));
        assert!(doors.origin_allowed("https://app.example", "127.0.0.1:8080"));
        assert!(doors.origin_allowed("https://app.example/", "127.0.0.1:8080"));
        for origin in [
            "http://evil.example",
            "http://localhost:8080",
            "http://127.0.0.1:9090",
            "null",
            "file://",
            "https://app.example.evil",
        ] {
            assert!(!doors.origin_allowed(origin, "127.0.0.1:8080"), "{origin}");
        }
        // Through a proxy that ends TLS: the page's origin has no port, nor has the host.
        assert!(doors.origin_allowed("https://runs.example", "runs.example"));
    }
}
