//! PostgreSQL over TLS, as managed services require it: a server of the test's own with
//! `ssl = on` and a certificate signed by a CA the test makes, reached by the name on the
//! certificate (`hostaddr` says where it listens) and by another name.
//!
//! The server is started with `TRELLIS_TEST_POSTGRES_CONTROL` (`.ci/postgres`). Without it this
//! test fails in CI and, elsewhere, is listed as ignored.

use std::path::Path;
use std::process::Command;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use trellis::checkpoint::{CheckpointError, PostgresCheckpointer, StoreUrl};

/// The name on the server's certificate; it need not resolve, as `hostaddr` is given.
const NAME: &str = "db.trellis.test";

/// A CA, and a certificate for [`NAME`] it signs, written as `server.crt` and `server.key` in
/// `server_dir` (where `.ci/postgres` looks for them); returns the CA's certificate as PEM.
fn certificates(server_dir: &Path) -> String {
    let ca_key = KeyPair::generate().expect("a key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("a CA certificate");
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().expect("a key");
    let server = CertificateParams::new(vec![NAME.to_owned()])
        .expect("server parameters")
        .signed_by(&server_key, &issuer)
        .expect("a server certificate");
    std::fs::write(server_dir.join("server.crt"), server.pem()).expect("writes");
    std::fs::write(server_dir.join("server.key"), server_key.serialize_pem()).expect("writes");
    ca.pem()
}

/// Runs `.ci/postgres VERB DIR`; its output.
fn cluster(control: &str, verb: &str, dir: &Path) -> String {
    let output = Command::new(control)
        .args([verb, &dir.display().to_string()])
        .output()
        .expect("the control script runs");
    assert!(
        output.status.success(),
        "{control} {verb}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned()
}

async fn connect(url: &str) -> Result<PostgresCheckpointer, CheckpointError> {
    PostgresCheckpointer::connect(url).await
}

/// How many of the server's sessions named `trellis` (the store's) are encrypted, and how many
/// are not, asked over a plain connection of the test's own.
async fn sessions(plain_url: &str) -> (i64, i64) {
    let (client, connection) = tokio_postgres::connect(plain_url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
             FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.application_name = 'trellis'",
            &[],
        )
        .await
        .expect("queries");
    (row.get(0), row.get(1))
}

#[cfg_attr(
    not(postgres_control),
    ignore = "needs TRELLIS_TEST_POSTGRES_CONTROL (`.ci/postgres`), to start a server of its own with TLS"
)]
#[tokio::test(flavor = "multi_thread")]
async fn require_encrypts_and_verify_full_checks_the_name_on_the_certificate() {
    let control = std::env::var("TRELLIS_TEST_POSTGRES_CONTROL")
        .expect("TRELLIS_TEST_POSTGRES_CONTROL: .ci/run sets it to .ci/postgres");
    // The server runs as the `postgres` user when the tests run as root: it must reach the folder.
    let folder = {
        use std::os::unix::fs::PermissionsExt as _;
        tempfile::Builder::new()
            .prefix("trellis-tls-")
            .permissions(std::fs::Permissions::from_mode(0o755))
            .tempdir()
            .expect("a scratch folder")
    };
    let server_dir = folder.path().join("pg");
    std::fs::create_dir_all(&server_dir).expect("a folder");
    let ca = folder.path().join("ca.pem");
    std::fs::write(&ca, certificates(&server_dir)).expect("writes");
    let plain = cluster(&control, "start", &server_dir);
    struct Stop<'a>(&'a str, &'a Path);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = Command::new(self.0)
                .args(["stop", &self.1.display().to_string()])
                .output();
        }
    }
    let _stop = Stop(&control, &server_dir);
    let port = plain
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(port, _)| port.to_owned())
        .expect("a port in the URL");
    let url = |host: &str, query: &str| {
        format!("postgres://trellis:not-a-secret@{host}:{port}/postgres?hostaddr=127.0.0.1&{query}")
    };
    let root = format!("sslrootcert={}", ca.display());

    // verify-full with the CA, by the certificate's name: encrypted.
    let store = connect(&url(NAME, &format!("sslmode=verify-full&{root}")))
        .await
        .expect("verify-full connects by the certificate's name");
    assert_eq!(
        sessions(&plain).await,
        (1, 0),
        "the store's session is encrypted"
    );
    drop(store);

    // verify-full by another name: refused, and the error says why.
    let error = connect(&url(
        "elsewhere.trellis.test",
        &format!("sslmode=verify-full&{root}"),
    ))
    .await
    .err()
    .map(|e| e.to_string())
    .expect("verify-full refuses another name");
    assert!(
        error.contains("certificate") && error.contains("not valid for name"),
        "{error}"
    );
    // verify-full with the system's CAs, which never signed this certificate: refused.
    let error = connect(&url(NAME, "sslmode=verify-full"))
        .await
        .err()
        .map(|e| e.to_string())
        .expect("verify-full refuses an unknown CA");
    assert!(error.contains("UnknownIssuer"), "{error}");
    // verify-ca checks the CA, not the name.
    connect(&url(
        "elsewhere.trellis.test",
        &format!("sslmode=verify-ca&{root}"),
    ))
    .await
    .expect("verify-ca connects by any name");
    // require: encrypted, the certificate taken as it is.
    let store = connect(&url("elsewhere.trellis.test", "sslmode=require"))
        .await
        .expect("require connects");
    let (encrypted, _) = sessions(&plain).await;
    assert!(encrypted >= 1, "require encrypts");
    drop(store);
    // No error or display of the URL shows its password.
    for text in [
        format!(
            "{}",
            url(NAME, "sslmode=verify-full")
                .parse::<StoreUrl>()
                .expect("parses")
        ),
        format!(
            "{:?}",
            url(NAME, "sslmode=verify-full")
                .parse::<StoreUrl>()
                .expect("parses")
        ),
        error,
    ] {
        assert!(!text.contains("not-a-secret"), "{text}");
    }
}
