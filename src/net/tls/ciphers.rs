//! OpenSSL's cipher strings (`--tls-ciphers DEFAULT:-AES128-SHA256`) read over the suites
//! rustls has, for the front-ends whose tools take them.

use super::error::TlsSetupError;

/// The suites a list names, in rustls's order. Each word is a suite's standard name
/// (TLS13_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), its OpenSSL name
/// (ECDHE-RSA-AES128-GCM-SHA256, TLS_AES_128_GCM_SHA256) or a word of an OpenSSL cipher string,
/// read as OpenSSL reads it over the suites rustls has: `DEFAULT`, `ALL` and `HIGH` are every
/// one of them (all AEAD with forward secrecy); `ECDHE`, `aRSA`, `aECDSA`, `AESGCM`, `AES128`,
/// `AES256`, `CHACHA20`, `SHA256`, `SHA384`, `TLSv1.2`, `TLSv1.3` the ones they describe; `-X`
/// and `!X` take out what X selects (nothing when rustls has no such suite: `-AES128-SHA256`);
/// `+X` (reordering) and `@STRENGTH`, `@SECLEVEL=N` change nothing. A word that selects nothing
/// at all, and a list that leaves no suite, are refused.
pub(super) fn cipher_suites(
    offered: &[rustls::SupportedCipherSuite],
    names: &[String],
) -> Result<Vec<rustls::SupportedCipherSuite>, TlsSetupError> {
    let name_of = |s: &rustls::SupportedCipherSuite| format!("{:?}", s.suite());
    let known = || offered.iter().map(name_of).collect::<Vec<_>>().join(", ");
    let mut chosen: Vec<rustls::SupportedCipherSuite> = Vec::new();
    let mut removed: Vec<rustls::SupportedCipherSuite> = Vec::new();
    for name in names {
        let word = name.trim();
        if word.starts_with('@') || word.starts_with('+') {
            continue;
        }
        let (take_out, word) = match word.strip_prefix(['-', '!']) {
            Some(rest) => (true, rest),
            None => (false, word),
        };
        let selected: Vec<rustls::SupportedCipherSuite> =
            offered.iter().filter(|s| openssl_selects(word, &name_of(s))).copied().collect();
        if take_out {
            removed.extend(selected);
            continue;
        }
        if selected.is_empty() && !openssl_word_for_nothing(word) {
            return Err(format!("unknown TLS cipher suite '{name}': the suites offered are {}", known()).into());
        }
        for s in selected {
            if !chosen.iter().any(|c| c.suite() == s.suite()) {
                chosen.push(s);
            }
        }
    }
    chosen.retain(|c| !removed.iter().any(|r| r.suite() == c.suite()));
    if chosen.is_empty() {
        return Err(format!(
            "the TLS cipher list '{}' leaves no suite rustls speaks: the suites offered are {}",
            names.join(":"),
            known()
        )
        .into());
    }
    // rustls's order (its preference), as before.
    Ok(offered.iter().filter(|s| chosen.iter().any(|c| c.suite() == s.suite())).copied().collect())
}

/// Whether the word of a cipher list selects the suite rustls calls `suite` (its standard name,
/// such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS13_AES_256_GCM_SHA384).
fn openssl_selects(word: &str, suite: &str) -> bool {
    let wanted = word.to_ascii_uppercase();
    let tls13 = suite.starts_with("TLS13_");
    let has = |part: &str| suite.contains(part);
    match wanted.as_str() {
        "DEFAULT" | "ALL" | "HIGH" | "COMPLEMENTOFNONE" => true,
        "ECDHE" | "EECDH" | "KECDHE" | "TLSV1.2" => !tls13,
        "TLSV1.3" => tls13,
        "ARSA" => has("_RSA_"),
        "AECDSA" | "ECDSA" => has("_ECDSA_"),
        "AESGCM" | "AES" => has("AES_") && has("_GCM_"),
        "AES128" => has("AES_128"),
        "AES256" => has("AES_256"),
        "CHACHA20" => has("CHACHA20"),
        "SHA256" => suite.ends_with("SHA256"),
        "SHA384" => suite.ends_with("SHA384"),
        _ => wanted == suite || openssl_name(suite).as_deref() == Some(wanted.as_str()),
    }
}

/// Words of OpenSSL's cipher strings that select no suite rustls has (weak or other kinds of
/// suites: `!aNULL`, `!MD5`, `RSA`, ...), and OpenSSL's names of suites rustls lacks, such as
/// AES128-SHA256: in a list, they add nothing.
fn openssl_word_for_nothing(word: &str) -> bool {
    const WORDS: &[&str] = &[
        "MEDIUM",
        "LOW",
        "EXPORT",
        "EXP",
        "NULL",
        "ENULL",
        "ANULL",
        "COMPLEMENTOFDEFAULT",
        "COMPLEMENTOFALL",
        "RC4",
        "MD5",
        "3DES",
        "DES",
        "SEED",
        "IDEA",
        "CAMELLIA",
        "ARIA",
        "PSK",
        "SRP",
        "DSS",
        "KRSA",
        "RSA",
        "DHE",
        "EDH",
        "KDHE",
        "SHA1",
        "SHA",
        "AESCCM",
        "AESCCM8",
        "SSLV3",
        "TLSV1",
        "TLSV1.0",
        "TLSV1.1",
    ];
    let upper = word.to_ascii_uppercase();
    // OpenSSL's suite names: upper-case words joined by dashes (AES128-SHA256, DHE-RSA-AES256-SHA).
    let suite_like =
        upper.contains('-') && upper.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-');
    WORDS.contains(&upper.as_str()) || suite_like
}

/// OpenSSL's name of a suite rustls has: the TLS 1.3 ones keep their standard name with TLS_,
/// the TLS 1.2 ones read ECDHE-RSA-AES128-GCM-SHA256 or ECDHE-ECDSA-CHACHA20-POLY1305.
fn openssl_name(suite: &str) -> Option<String> {
    if let Some(rest) = suite.strip_prefix("TLS13_") {
        return Some(format!("TLS_{rest}"));
    }
    let (auth, cipher) = suite.strip_prefix("TLS_ECDHE_")?.split_once("_WITH_")?;
    let cipher = match cipher {
        "AES_128_GCM_SHA256" => "AES128-GCM-SHA256",
        "AES_256_GCM_SHA384" => "AES256-GCM-SHA384",
        "CHACHA20_POLY1305_SHA256" => "CHACHA20-POLY1305",
        _ => return None,
    };
    Some(format!("ECDHE-{auth}-{cipher}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::crypto::ring;

    fn chosen(list: &str) -> Result<Vec<String>, TlsSetupError> {
        let offered = ring::default_provider().cipher_suites;
        let names: Vec<String> = list.split(':').map(String::from).collect();
        Ok(cipher_suites(&offered, &names)?.iter().map(|s| format!("{:?}", s.suite())).collect())
    }

    #[test]
    fn openssl_cipher_strings_map_onto_rustls_suites() {
        let all = ring::default_provider().cipher_suites.len();
        for list in ["DEFAULT", "DEFAULT:-AES128-SHA256", "HIGH", "HIGH:!aNULL:!MD5", "ALL:@STRENGTH"] {
            assert_eq!(chosen(list).unwrap().len(), all, "{list}");
        }
        assert_eq!(chosen("ECDHE-RSA-AES128-GCM-SHA256").unwrap(), ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]);
        assert_eq!(chosen("TLS_AES_256_GCM_SHA384").unwrap(), ["TLS13_AES_256_GCM_SHA384"]);
        let no_chacha = chosen("DEFAULT:!CHACHA20").unwrap();
        assert!(no_chacha.len() < all && no_chacha.iter().all(|s| !s.contains("CHACHA")), "{no_chacha:?}");
        assert!(chosen("NOPE").unwrap_err().0.contains("unknown TLS cipher suite 'NOPE'"));
        assert!(chosen("AES128-SHA256").unwrap_err().0.contains("leaves no suite"));
    }
}
