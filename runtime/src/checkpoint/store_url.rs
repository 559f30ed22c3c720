//! `StoreUrl`: where runs are kept, as the CLI and the server take it (`--db URL`).

use std::borrow::Cow;
use std::fmt;

use super::CheckpointError;
use super::RunQueue;
#[cfg(feature = "sqlite")]
use super::SqliteCheckpointer;
#[cfg(feature = "postgres")]
use super::{PostgresCheckpointer, PostgresOptions};

/// Where runs are kept, as a URL: `sqlite:PATH` (also `sqlite://PATH`) or
/// `postgres://…` / `postgresql://…`.
///
/// Neither its `Display` nor its `Debug` shows a PostgreSQL URL's password (`***` stands in for
/// it), nor does an error that quotes it.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// An SQLite file.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL server (the whole URL, as tokio-postgres reads it).
    Postgres(String),
}

impl std::str::FromStr for StoreUrl {
    type Err = CheckpointError;
    fn from_str(url: &str) -> Result<Self, CheckpointError> {
        let unsupported = |reason: &str| CheckpointError::Url {
            url: without_password(url).into_owned(),
            reason: reason.to_owned(),
        };
        match url.split_once(':') {
            Some(("sqlite", path)) => {
                let path = path.strip_prefix("//").unwrap_or(path);
                if path.is_empty() {
                    return Err(unsupported("it names no file"));
                }
                Ok(StoreUrl::Sqlite(path.into()))
            }
            Some(("postgres" | "postgresql", _)) => Ok(StoreUrl::Postgres(url.to_owned())),
            _ => Err(unsupported(
                "expected `sqlite:PATH` or `postgres://user@host:port/database`",
            )),
        }
    }
}

impl StoreUrl {
    /// Opens the store (an SQLite file is created if missing; a PostgreSQL schema is brought up
    /// to date).
    ///
    /// # Errors
    /// The backend's error; [`CheckpointError::Url`] when this build lacks the backend's
    /// feature (`sqlite`, `postgres`).
    pub async fn open(&self) -> Result<std::sync::Arc<dyn RunQueue>, CheckpointError> {
        match self {
            #[cfg(feature = "sqlite")]
            StoreUrl::Sqlite(path) => Ok(std::sync::Arc::new(SqliteCheckpointer::open(path)?)),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(url) => Ok(std::sync::Arc::new(
                PostgresCheckpointer::connect(url).await?,
            )),
            #[allow(unreachable_patterns)]
            other => Err(CheckpointError::Url {
                url: other.to_string(),
                reason: format!(
                    "this build has no {} support (the `trellis` feature `{}`)",
                    other.backend(),
                    other.feature()
                ),
            }),
        }
    }

    /// Opens an existing store to inspect it, creating nothing: a missing SQLite file, or a
    /// PostgreSQL database without Trellis's tables (or at another schema version), is refused.
    ///
    /// # Errors
    /// As [`open`](Self::open), and [`CheckpointError::Corrupt`] for a missing store.
    pub async fn open_existing(&self) -> Result<std::sync::Arc<dyn RunQueue>, CheckpointError> {
        match self {
            StoreUrl::Sqlite(path) if !path.is_file() => Err(CheckpointError::Corrupt {
                what: format!("database `{}`", path.display()),
                reason: "there is no such file (and inspecting creates none)".to_owned(),
            }),
            #[cfg(feature = "postgres")]
            StoreUrl::Postgres(url) => {
                let options = PostgresOptions {
                    migrate: false,
                    ..PostgresOptions::default()
                };
                Ok(std::sync::Arc::new(
                    PostgresCheckpointer::connect_with(url, options).await?,
                ))
            }
            _ => self.open().await,
        }
    }

    fn backend(&self) -> &'static str {
        match self {
            StoreUrl::Sqlite(_) => "SQLite",
            StoreUrl::Postgres(_) => "PostgreSQL",
        }
    }

    fn feature(&self) -> &'static str {
        match self {
            StoreUrl::Sqlite(_) => "sqlite",
            StoreUrl::Postgres(_) => "postgres",
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreUrl::Postgres(url) => f.write_str(&without_password(url)),
        }
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            StoreUrl::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&without_password(url))
                .finish(),
        }
    }
}

/// `url` with `***` for its password: in `postgres://user:password@host/…`, and in
/// `password=…` of `key=value` pairs or of a URL's query.
pub(crate) fn without_password(url: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(url);
    // `scheme://user:password@host`: the authority ends at the first `/`, `?` or `#`.
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        if let Some(at) = authority.rfind('@')
            && let Some(colon) = authority[..at].find(':')
        {
            out = Cow::Owned(format!(
                "{scheme}://{}:***{}",
                &authority[..colon],
                &rest[at..]
            ));
        }
    }
    if !out.contains("password=") {
        return out;
    }
    // `password=…` up to the next `&` (a query) or blank (pairs; a quoted value to its quote).
    let text = out.into_owned();
    let mut redacted = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("password=") {
        let starts_a_key = at == 0 || matches!(rest.as_bytes()[at - 1], b'&' | b'?' | b' ' | b'\t');
        let value_start = at + "password=".len();
        redacted.push_str(&rest[..value_start]);
        rest = &rest[value_start..];
        if !starts_a_key {
            continue;
        }
        let end = if let Some(quoted) = rest.strip_prefix('\'') {
            let mut escaped = false;
            quoted
                .char_indices()
                .find(|&(_, c)| {
                    let closes = c == '\'' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closes
                })
                .map_or(rest.len(), |(at, _)| at + 2)
        } else {
            rest.find(['&', ' ', '\t', '#']).unwrap_or(rest.len())
        };
        redacted.push_str("***");
        rest = &rest[end..];
    }
    redacted.push_str(rest);
    Cow::Owned(redacted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        for (url, shown) in [
            (
                "postgres://u:s3cret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            (
                "postgresql://u:p%40ss@h/db?sslmode=require",
                "postgresql://u:***@h/db?sslmode=require",
            ),
            (
                "postgres://u@h/db?password=s3cret&sslmode=require",
                "postgres://u@h/db?password=***&sslmode=require",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
        ] {
            let parsed: StoreUrl = url.parse().expect("a PostgreSQL URL");
            assert_eq!(parsed.to_string(), shown);
            assert_eq!(format!("{parsed:?}"), format!("Postgres({shown:?})"));
        }
        assert_eq!(
            without_password("host=h password='a b\\'c' user=u"),
            "host=h password=*** user=u"
        );
        assert_eq!(without_password("host=h password=x"), "host=h password=***");
        assert_eq!(
            without_password("host=h mypassword=x"),
            "host=h mypassword=x"
        );
        let error = "mysql://u:s3cret@h/db"
            .parse::<StoreUrl>()
            .expect_err("unsupported");
        assert!(!error.to_string().contains("s3cret"), "{error}");
    }
}
