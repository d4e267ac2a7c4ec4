//! TLS against a redis-server whose certificates are X.509 v1, made here with the `openssl`
//! command line as test setups make them (`openssl x509 -req` without extensions): accepted
//! through the memtier and valkey-benchmark front-ends and respbench's own command line, with a
//! note in the JSON result; an expired certificate, an unknown CA and a forged signature refused
//! with their reason named. And a self-signed server certificate from `openssl req -x509`
//! (basicConstraints CA:TRUE, as OpenSSL makes it), trusted as its own CA: taken as OpenSSL
//! takes it, its name still checked.

mod common;

use std::path::{Path, PathBuf};

use common::*;

/// Runs `openssl` with `args` in `dir`; its error output when it fails.
fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("openssl").current_dir(dir).args(args).output().unwrap();
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

fn must(dir: &Path, args: &[&str]) {
    if let Err(e) = openssl(dir, args) {
        panic!("openssl {args:?}: {e}");
    }
}

/// A P-256 key `NAME.key` and a request `NAME.csr` for the subject `/CN=cn`.
fn key_and_request(dir: &Path, name: &str, cn: &str) {
    must(dir, &["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", &format!("{name}.key")]);
    must(
        dir,
        &["req", "-new", "-key", &format!("{name}.key"), "-subj", &format!("/CN={cn}"), "-out", &format!("{name}.csr")],
    );
}

/// A self-signed v1 CA certificate `NAME.crt`.
fn v1_ca(dir: &Path, name: &str, cn: &str) -> PathBuf {
    key_and_request(dir, name, cn);
    let (key, csr, crt) = (format!("{name}.key"), format!("{name}.csr"), format!("{name}.crt"));
    must(dir, &["x509", "-req", "-in", &csr, "-signkey", &key, "-days", "30", "-out", &crt]);
    dir.join(crt)
}

/// A v1 certificate `NAME.crt` for `/CN=localhost` issued by the CA `ca`; `expired` makes one
/// whose validity ended a day ago.
fn v1_server(dir: &Path, name: &str, ca: &str, expired: bool) -> (PathBuf, PathBuf) {
    key_and_request(dir, name, "localhost");
    let (csr, crt) = (format!("{name}.csr"), format!("{name}.crt"));
    let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
    let issue = ["x509", "-req", "-in", &csr, "-CA", &ca_crt, "-CAkey", &ca_key, "-set_serial", "7", "-out", &crt];
    if !expired {
        must(dir, &[&issue[..], &["-days", "30"]].concat());
    } else if openssl(dir, &[&issue[..], &["-days", "-1"]].concat()).is_err() {
        // OpenSSL 3.4 and later take the dates themselves.
        must(dir, &[&issue[..], &["-not_before", "20200101000000Z", "-not_after", "20200102000000Z"]].concat());
    }
    (dir.join(crt), dir.join(format!("{name}.key")))
}

/// The certificates of these tests, checked to be what they claim.
struct Certs {
    ca: PathBuf,
    other_ca: PathBuf,
    /// Same subject as `ca`, another key: what it "signed" does not verify with `ca`'s key.
    impostor_ca: PathBuf,
    server: (PathBuf, PathBuf),
    expired: (PathBuf, PathBuf),
}

fn make_certs(dir: &Path) -> Certs {
    let ca = v1_ca(dir, "ca", "respbench v1 CA");
    let other_ca = v1_ca(dir, "other-ca", "another v1 CA");
    let impostor_ca = v1_ca(dir, "impostor-ca", "respbench v1 CA");
    let server = v1_server(dir, "server", "ca", false);
    let expired = v1_server(dir, "expired", "ca", true);
    for crt in [&ca, &server.0, &expired.0] {
        let out =
            std::process::Command::new("openssl").args(["x509", "-noout", "-text", "-in"]).arg(crt).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("Version: 1 (0x0)"), "{} is not v1", crt.display());
    }
    Certs { ca, other_ca, impostor_ca, server, expired }
}

/// A redis-server with a TLS port serving `cert`.
fn tls_server(ca: &Path, cert: &(PathBuf, PathBuf)) -> (Server, String) {
    tls_server_asking(ca, cert, false)
}

/// The same, asking clients for a certificate issued by `ca` when `auth_clients`.
fn tls_server_asking(ca: &Path, (cert, key): &(PathBuf, PathBuf), auth_clients: bool) -> (Server, String) {
    let tls_port = free_port().to_string();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "--tls-port".to_string(),
        tls_port.clone(),
        "--tls-cert-file".into(),
        path(cert),
        "--tls-key-file".into(),
        path(key),
        "--tls-ca-cert-file".into(),
        path(ca),
        "--tls-auth-clients".into(),
        if auth_clients { "yes" } else { "no" }.into(),
    ];
    (Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>()), tls_port)
}

fn memtier(port: &str, ca: &Path, extra: &[&str]) -> std::process::Output {
    respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", port, "--tls", "--cacert", ca.to_str().unwrap()])
        .args(["-n", "100", "-c", "1", "-t", "1", "--ratio=1:0", "--hide-histogram"])
        .args(extra)
        .output()
        .unwrap()
}

fn valkey(port: &str, ca: &Path) -> std::process::Output {
    respbench()
        .args(["valkey-benchmark", "-h", "127.0.0.1", "-p", port, "--tls", "--cacert", ca.to_str().unwrap()])
        .args(["-n", "100", "-t", "set", "-q"])
        .output()
        .unwrap()
}

fn warnings(json: &Path) -> String {
    read_json(json)["warnings"].to_string()
}

#[test]
fn front_ends_accept_a_v1_chain_and_the_json_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, port) = tls_server(&certs.ca, &certs.server);
    let json = dir.path().join("memtier.json");
    let out = memtier(&port, &certs.ca, &["--respbench-json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 100);
    assert!(warnings(&json).contains("X.509 v1 certificate (CN=localhost)"), "{}", warnings(&json));
    // TLS 1.2 signs the key exchange otherwise than 1.3: the v1 key verifies both.
    let out = memtier(&port, &certs.ca, &["--tls-protocols", "TLSv1.2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = valkey(&port, &certs.ca);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("v1"), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 300);
    // respbench's own command line checks the name too: a v1 certificate's only name is its
    // common name, which an IP address never matches (as in OpenSSL).
    let native = |extra: &[&str]| {
        respbench()
            .args(["-h", "127.0.0.1", "-p", &port, "--tls", "--cacert", certs.ca.to_str().unwrap(), "-n", "100"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = native(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("not valid for the name '127.0.0.1' but for localhost") && err.lines().count() == 1, "{err}");
    let json = dir.path().join("native.json");
    let out = native(&["--sni", "localhost", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("X.509 v1") && err.contains("host name against its common name"), "{err}");
    assert!(warnings(&json).contains("X.509 v1"), "{}", warnings(&json));
    assert_eq!(server.calls("set") + server.calls("get"), 400);
}

#[test]
fn an_unknown_ca_or_a_forged_signature_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, port) = tls_server(&certs.ca, &certs.server);
    for (ca, reason) in [(&certs.other_ca, "unknown CA"), (&certs.impostor_ca, "bad signature")] {
        for out in [memtier(&port, ca, &[]), valkey(&port, ca)] {
            assert_eq!(out.status.code(), Some(1), "{reason}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(err.contains("TLS handshake failed") && err.contains(reason), "{reason}: {err}");
        }
    }
    assert_eq!(server.calls("set"), 0);
}

#[test]
fn an_expired_v1_certificate_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, port) = tls_server(&certs.ca, &certs.expired);
    for out in [memtier(&port, &certs.ca, &[]), valkey(&port, &certs.ca)] {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("the server's certificate has expired"), "{err}");
    }
    // respbench's own command line says the same before it would look at the name.
    let out = respbench()
        .args(["-h", "127.0.0.1", "-p", &port, "--tls", "--cacert", certs.ca.to_str().unwrap(), "-n", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has expired") && stderr(&out).lines().count() == 1, "{}", stderr(&out));
    assert_eq!(server.calls("set"), 0);
}

/// A v3 intermediate CA `NAME.crt` (basicConstraints CA:TRUE) under the CA `ca`.
fn v3_intermediate(dir: &Path, name: &str, ca: &str) {
    key_and_request(dir, name, &format!("{name} intermediate"));
    std::fs::write(dir.join("ca.ext"), "basicConstraints=critical,CA:TRUE\n").unwrap();
    let (csr, crt) = (format!("{name}.csr"), format!("{name}.crt"));
    let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
    must(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-set_serial",
            "9",
            "-days",
            "30",
            "-extfile",
            "ca.ext",
            "-out",
            &crt,
        ],
    );
}

#[test]
fn a_v1_certificate_chains_through_a_ca_intermediate_only() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    // Root (v1) → intermediate (v3, a CA) → server (v1); the server sends its certificate and
    // the intermediate's.
    v3_intermediate(dir.path(), "inter", "ca");
    let (leaf, key) = v1_server(dir.path(), "leaf", "inter", false);
    let chain = dir.path().join("chain.crt");
    let pem = |p: &Path| std::fs::read_to_string(p).unwrap();
    std::fs::write(&chain, pem(&leaf) + &pem(&dir.path().join("inter.crt"))).unwrap();
    let (server, port) = tls_server(&certs.ca, &(chain, key.clone()));
    let out = memtier(&port, &certs.ca, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 100);
    // Under a v1 certificate that is not self-signed (not a CA, for OpenSSL), it is refused.
    let (plain_leaf, _) = &certs.server;
    let (under, under_key) = v1_server(dir.path(), "under", "server", false);
    let chain = dir.path().join("bad-chain.crt");
    std::fs::write(&chain, pem(&under) + &pem(plain_leaf)).unwrap();
    let (_bad, bad_port) = tls_server(&certs.ca, &(chain, under_key));
    let out = memtier(&bad_port, &certs.ca, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not a CA certificate"), "{}", stderr(&out));
}

#[test]
fn a_v1_client_certificate_is_offered_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let certs = make_certs(dir.path());
    let (server, port) = tls_server_asking(&certs.ca, &certs.server, true);
    let (client, client_key) = v1_server(dir.path(), "client", "ca", false);
    let (cert, key) = (client.to_str().unwrap(), client_key.to_str().unwrap());
    let out = memtier(&port, &certs.ca, &["--cert", cert, "--key", key]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.calls("set"), 100);
    // Without it the server refuses; with another key the pair is refused before connecting.
    let out = memtier(&port, &certs.ca, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("client certificate"), "{}", stderr(&out));
    let out = memtier(&port, &certs.ca, &["--cert", cert, "--key", certs.server.1.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("does not fit the certificate") && err.contains("X.509 v1"), "{err}");
}

/// A self-signed certificate `NAME.crt` as `openssl req -x509` makes one for a test server:
/// basicConstraints CA:TRUE, names `sans`.
fn self_signed(dir: &Path, name: &str, sans: &str) -> (PathBuf, PathBuf) {
    let (key, crt) = (format!("{name}.key"), format!("{name}.crt"));
    let (san, ca) = (format!("subjectAltName={sans}"), "basicConstraints=critical,CA:TRUE");
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", &key, "-out", &crt];
    must(
        dir,
        &[&["req", "-x509"][..], &ec, &["-days", "30", "-subj", "/CN=localhost", "-addext", &san, "-addext", ca]]
            .concat(),
    );
    (dir.join(crt), dir.join(key))
}

#[test]
fn a_self_signed_ca_certificate_as_the_servers_own_is_taken_with_its_name_checked() {
    let dir = tempfile::tempdir().unwrap();
    let cert = self_signed(dir.path(), "self", "DNS:localhost,IP:127.0.0.1");
    let (other, _) = self_signed(dir.path(), "other", "DNS:localhost,IP:127.0.0.1");
    let (server, port) = tls_server(&cert.0, &cert);
    let native = |ca: &Path, extra: &[&str]| {
        respbench()
            .args(["-h", "127.0.0.1", "-p", &port, "--tls", "--cacert", ca.to_str().unwrap(), "-n", "100", "-q"])
            .args(["--ratio", "1:0"])
            .args(extra)
            .output()
            .unwrap()
    };
    for extra in [&[][..], &["--sni", "localhost"]] {
        let out = native(&cert.0, extra);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
    }
    for out in [memtier(&port, &cert.0, &[]), valkey(&port, &cert.0)] {
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(server.calls("set"), 400);
    // Its names are still the only ones it is good for, and only it vouches for itself.
    let refused = [
        (native(&cert.0, &["--sni", "example.org"]), "not valid for the name 'example.org'"),
        (native(&other, &[]), "TLS handshake failed: bad signature"),
    ];
    for (out, reason) in refused {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(reason) && err.lines().count() == 1, "{reason}: {err}");
    }
    assert_eq!(server.calls("set"), 400);
}
