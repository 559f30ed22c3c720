//! TLS to PostgreSQL as libpq's `sslmode` and `sslrootcert` ask for it, through rustls (no
//! OpenSSL): the two parameters are read out of the URL here, since tokio-postgres knows neither
//! `verify-ca`, `verify-full` nor `sslrootcert`, and the rest of the URL is its to read.
//!
//! | `sslmode` | encrypted | certificate checked |
//! | --- | --- | --- |
//! | `disable` | no | — |
//! | `prefer` (the default) | if the server offers it | no |
//! | `require` | yes | no |
//! | `verify-ca` | yes | signed by a trusted CA |
//! | `verify-full` | yes | signed by a trusted CA, for the host name connected to |
//!
//! The trusted CAs are the system's store, or the PEM file `sslrootcert=PATH` names
//! (`sslrootcert=system`: the system's store). As in libpq, `require` with `sslrootcert` checks
//! the CA as `verify-ca` does.

use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// `sslmode`, as libpq reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// Where the trusted CAs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Roots {
    System,
    File(String),
}

/// The TLS half of a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tls {
    pub(super) mode: Mode,
    /// `sslrootcert`, when the URL names one.
    pub(super) roots: Option<Roots>,
}

/// Why a URL's TLS settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub(super) enum TlsError {
    #[error(
        "`sslmode={0}` is not one of `disable`, `prefer`, `require`, `verify-ca` or `verify-full`"
    )]
    Mode(String),
    #[error("cannot read the CA certificates of `sslrootcert={path}`: {reason}")]
    RootCert { path: String, reason: String },
    #[error("`sslrootcert={0}` holds no certificate")]
    EmptyRootCert(String),
    #[error("the system's certificate store holds no certificate")]
    NoSystemRoots,
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// Takes `sslmode` and `sslrootcert` out of `url` (a `postgres://` URL or `key=value` pairs),
/// and returns what is left for tokio-postgres with them.
pub(super) fn split(url: &str) -> Result<(String, Tls), TlsError> {
    let mut mode = None;
    let mut roots = None;
    let mut take = |key: &str, value: String| -> Result<bool, TlsError> {
        match key {
            "sslmode" => {
                mode = Some(match value.as_str() {
                    "disable" => Mode::Disable,
                    "allow" | "prefer" => Mode::Prefer,
                    "require" => Mode::Require,
                    "verify-ca" => Mode::VerifyCa,
                    "verify-full" => Mode::VerifyFull,
                    _ => return Err(TlsError::Mode(value)),
                });
                Ok(true)
            }
            "sslrootcert" => {
                roots = Some(if value == "system" {
                    Roots::System
                } else {
                    Roots::File(value)
                });
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(
                        key,
                        percent_decode_str(value).decode_utf8_lossy().into_owned(),
                    )? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => url.to_owned(),
        }
    } else {
        let mut kept = Vec::new();
        for (key, value, text) in key_values(url) {
            if !take(key, value)? {
                kept.push(text);
            }
        }
        kept.join(" ")
    };
    // As libpq: a CA file named makes `require` check the CA.
    let mode = match (mode.unwrap_or(Mode::Prefer), &roots) {
        (Mode::Require, Some(_)) => Mode::VerifyCa,
        (mode, _) => mode,
    };
    Ok((rest, Tls { mode, roots }))
}

impl Tls {
    /// What tokio-postgres is told: whether TLS is tried, and whether it is required.
    pub(super) fn ssl_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The connector for these settings; `None` when TLS is off.
    pub(super) fn connector(&self) -> Result<Option<MakeRustlsConnect>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?;
        let verifier: Arc<dyn ServerCertVerifier> = match self.mode {
            Mode::Disable => return Ok(None),
            Mode::Prefer | Mode::Require => Arc::new(Unverified(provider)),
            Mode::VerifyCa | Mode::VerifyFull => {
                let roots = self.root_store()?;
                let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|error| rustls::Error::General(error.to_string()))?;
                if self.mode == Mode::VerifyCa {
                    Arc::new(AnyName(webpki))
                } else {
                    webpki
                }
            }
        };
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Some(MakeRustlsConnect::new(config)))
    }

    fn root_store(&self) -> Result<RootCertStore, TlsError> {
        let mut store = RootCertStore::empty();
        match self.roots.as_ref().unwrap_or(&Roots::System) {
            Roots::File(path) => {
                let unreadable = |reason: String| TlsError::RootCert {
                    path: path.clone(),
                    reason,
                };
                let certs = CertificateDer::pem_file_iter(path)
                    .map_err(|error| unreadable(error.to_string()))?;
                for cert in certs {
                    let cert = cert.map_err(|error| unreadable(error.to_string()))?;
                    store
                        .add(cert)
                        .map_err(|error| unreadable(error.to_string()))?;
                }
                if store.is_empty() {
                    return Err(TlsError::EmptyRootCert(path.clone()));
                }
            }
            Roots::System => {
                // Certificates the store holds but rustls cannot parse are skipped, as browsers do.
                let found = rustls_native_certs::load_native_certs();
                store.add_parsable_certificates(found.certs);
                if store.is_empty() {
                    return Err(TlsError::NoSystemRoots);
                }
            }
        }
        Ok(store)
    }
}

/// `require` and `prefer`: encrypted, the certificate taken as it is (the handshake's
/// signatures are still checked, so the connection is with the certificate's key holder).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl Unverified {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

/// `verify-ca`: the chain checked against the trusted CAs, whatever host name it is for.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // The name is checked after the chain: this error means the chain is good.
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The `key=value` pairs of a libpq connection string, each with its text as written: values
/// may be single-quoted, with `\'` and `\\` escapes inside.
fn key_values(text: &str) -> Vec<(&str, String, &str)> {
    let mut pairs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let start = text.len() - rest.len();
        let Some(equals) = rest.find('=') else {
            // Not a pair: left for tokio-postgres to report.
            pairs.push(("", String::new(), rest));
            break;
        };
        let key = rest[..equals].trim();
        let mut after = rest[equals + 1..].trim_start();
        let mut value = String::new();
        if let Some(quoted) = after.strip_prefix('\'') {
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '\'' => {
                        end = at + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            after = &quoted[end..];
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            value.push_str(&after[..end]);
            after = &after[end..];
        }
        let end = text.len() - after.len();
        pairs.push((key, value, &text[start..end]));
        rest = after.trim_start();
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls(mode: Mode, roots: Option<Roots>) -> Tls {
        Tls { mode, roots }
    }

    #[test]
    fn a_url_without_tls_settings_prefers_tls_and_is_left_as_it_is() {
        let url = "postgres://u:p@h:5432/db?application_name=x";
        assert_eq!(
            split(url).unwrap(),
            (url.to_owned(), tls(Mode::Prefer, None))
        );
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_a_url() {
        let (rest, settings) = split(
            "postgres://u@h/db?sslmode=verify-full&connect_timeout=3&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u@h/db?connect_timeout=3");
        assert_eq!(
            settings,
            tls(Mode::VerifyFull, Some(Roots::File("/etc/ca.pem".into())))
        );
        assert_eq!(settings.ssl_mode(), SslMode::Require);
        let (rest, settings) = split("postgresql://h/db?sslmode=disable").unwrap();
        assert_eq!(rest, "postgresql://h/db");
        assert_eq!(settings.ssl_mode(), SslMode::Disable);
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_key_value_pairs() {
        let (rest, settings) =
            split("host=h sslmode = require  password='a b\\'c' sslrootcert='/my ca.pem' dbname=d")
                .unwrap();
        assert_eq!(rest, "host=h password='a b\\'c' dbname=d");
        // A CA named makes `require` check it, as in libpq.
        assert_eq!(
            settings,
            tls(Mode::VerifyCa, Some(Roots::File("/my ca.pem".into())))
        );
        let (_, settings) = split("host=h sslrootcert=system sslmode=verify-full").unwrap();
        assert_eq!(settings, tls(Mode::VerifyFull, Some(Roots::System)));
    }

    #[test]
    fn an_unknown_sslmode_is_refused_with_the_modes_it_could_be() {
        let error = split("postgres://h/db?sslmode=verify").unwrap_err();
        assert_eq!(
            error.to_string(),
            "`sslmode=verify` is not one of `disable`, `prefer`, `require`, `verify-ca` or `verify-full`"
        );
    }

    #[test]
    fn a_missing_root_certificate_file_is_a_clear_error() {
        let settings = tls(
            Mode::VerifyFull,
            Some(Roots::File("/nonexistent/ca.pem".into())),
        );
        let error = settings.connector().err().map(|e| e.to_string());
        assert!(
            error.as_deref().is_some_and(|e| e.starts_with(
                "cannot read the CA certificates of `sslrootcert=/nonexistent/ca.pem`"
            )),
            "{error:?}"
        );
    }

    #[test]
    fn tls_off_needs_no_connector_and_every_other_mode_builds_one() {
        assert!(tls(Mode::Disable, None).connector().unwrap().is_none());
        assert!(tls(Mode::Require, None).connector().unwrap().is_some());
    }
}
