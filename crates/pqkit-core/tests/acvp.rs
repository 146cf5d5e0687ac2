//! NIST ACVP known-answer tests (ACVP-Server v1.1.0.43, read from `../shared/vectors/acvp` or
//! `$PQKIT_VECTORS/acvp`): ML-KEM keyGen and encapDecap with the key-check groups, ML-DSA keyGen.
//! ML-DSA sigGen/sigVer are in `acvp_ml_dsa.rs`, SLH-DSA in `acvp_slh_dsa.rs`. Each test prints
//! how many cases it ran.

mod common;
mod oracles;

use common::{acvp_triples as cases, hex, kem, on_every_path, sig_alg as dsa};
use oracles as backend;

#[test]
fn ml_kem_keygen() {
    let paths = on_every_path(ml_kem_keygen_on);
    eprintln!("ML-KEM keyGen: on every hash path, {paths:?}");
}

fn ml_kem_keygen_on(isa: pqkit_hash::Isa) {
    let mut n = 0;
    for (g, t, e) in cases("ML-KEM-keyGen-FIPS203") {
        let seed = [hex(&t["d"]), hex(&t["z"])].concat();
        let dk = kem(&g).generate_from_seed(&seed).expect("keygen");
        assert_eq!(
            dk.encapsulation_key().as_bytes(),
            hex(&e["ek"]),
            "tcId {}",
            t["tcId"]
        );
        assert_eq!(dk.expanded(), hex(&e["dk"]), "tcId {}", t["tcId"]);
        assert_eq!(dk.seed(), Some(&seed[..]));
        n += 1;
    }
    eprintln!("ML-KEM keyGen: {n} cases passed (pqkit-lattice, {isa})");
    assert_eq!(n, 75);
}

fn ml_kem_encap_decap(dir: &str, expected_total: usize) {
    let paths = on_every_path(|isa| ml_kem_encap_decap_on(dir, expected_total, isa));
    eprintln!("{dir}: on every hash path, {paths:?}");
}

fn ml_kem_encap_decap_on(dir: &str, expected_total: usize, isa: pqkit_hash::Isa) {
    let (mut encap, mut decap, mut ek_check, mut dk_check) = (0, 0, 0, 0);
    for (g, t, e) in cases(dir) {
        let alg = kem(&g);
        let id = format!("{dir} tgId {} tcId {}", g["tgId"], t["tcId"]);
        match g["function"].as_str().expect("function") {
            "encapsulation" => {
                let ek = alg.encapsulation_key(&hex(&t["ek"])).expect("valid ek");
                let m: [u8; 32] = hex(&t["m"]).try_into().expect("32-byte m");
                let (c, k) = ek.encapsulate_deterministic(&m).expect("encapsulate");
                assert_eq!(c, hex(&e["c"]), "{id}");
                assert_eq!(k.as_bytes(), hex(&e["k"]), "{id}");
                encap += 1;
            }
            "decapsulation" => {
                let dk = match g["keyFormat"].as_str() {
                    Some("seed") => {
                        let seed = [hex(&t["d"]), hex(&t["z"])].concat();
                        alg.generate_from_seed(&seed).expect("keygen")
                    }
                    _ => alg
                        .decapsulation_key_from_expanded(&hex(&t["dk"]))
                        .expect("valid dk"),
                };
                let k = dk.decapsulate(&hex(&t["c"])).expect("decapsulate");
                assert_eq!(k.as_bytes(), hex(&e["k"]), "{id}");
                decap += 1;
            }
            "encapsulationKeyCheck" => {
                let ok = alg.encapsulation_key(&hex(&t["ek"])).is_ok();
                assert_eq!(ok, e["testPassed"].as_bool().expect("testPassed"), "{id}");
                ek_check += 1;
            }
            "decapsulationKeyCheck" => {
                let ok = alg.decapsulation_key_from_expanded(&hex(&t["dk"])).is_ok();
                assert_eq!(ok, e["testPassed"].as_bool().expect("testPassed"), "{id}");
                dk_check += 1;
            }
            other => panic!("{id}: unknown function {other}"),
        }
    }
    eprintln!(
        "{dir} on {isa}: {} cases passed (encapsulation {encap}, decapsulation {decap}, \
         encapsulationKeyCheck {ek_check}, decapsulationKeyCheck {dk_check})",
        encap + decap + ek_check + dk_check
    );
    assert_eq!(encap + decap + ek_check + dk_check, expected_total);
}

#[test]
fn ml_kem_encap_decap_fips203() {
    ml_kem_encap_decap("ML-KEM-encapDecap-FIPS203", 165);
}

#[test]
fn ml_kem_encap_decap_fips203_tr1() {
    ml_kem_encap_decap("ML-KEM-encapDecap-FIPS203-tr1", 195);
}

#[test]
fn ml_dsa_keygen_every_backend() {
    let paths = on_every_path(ml_dsa_keygen_on);
    eprintln!("ML-DSA keyGen: on every hash path, {paths:?}");
}

fn ml_dsa_keygen_on(isa: pqkit_hash::Isa) {
    eprintln!("ML-DSA keyGen on {isa}:");
    for b in backend::ALL {
        let mut n = 0;
        for (g, t, e) in cases("ML-DSA-keyGen-FIPS204") {
            let (pk, sk) = b.keygen(dsa(&g), &hex(&t["seed"])).expect("keygen");
            assert_eq!(pk, hex(&e["pk"]), "{} tcId {}", b.name(), t["tcId"]);
            assert_eq!(*sk, hex(&e["sk"]), "{} tcId {}", b.name(), t["tcId"]);
            n += 1;
        }
        eprintln!("ML-DSA keyGen: {n} cases passed ({})", b.name());
        assert_eq!(n, 75);
    }
    // The catalogue path: SigningKey::from_seed gives the same verifying key.
    let mut n = 0;
    for (g, t, e) in cases("ML-DSA-keyGen-FIPS204") {
        let key = dsa(&g)
            .signing_key_from_seed(&hex(&t["seed"]))
            .expect("keygen");
        assert_eq!(key.verifying_key().as_bytes(), hex(&e["pk"]));
        assert_eq!(key.expanded().expect("expanded").to_vec(), hex(&e["sk"]));
        // The expanded form loads back to the same verifying key.
        let again = dsa(&g)
            .signing_key_from_expanded(&hex(&e["sk"]))
            .expect("expanded sk loads");
        assert_eq!(again.verifying_key().as_bytes(), hex(&e["pk"]));
        n += 1;
    }
    eprintln!("ML-DSA keyGen: {n} cases passed (catalogue SigningKey, seed and expanded)");
    assert_eq!(n, 75);
}
