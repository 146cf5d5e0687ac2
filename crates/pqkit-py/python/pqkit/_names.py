"""Python identifiers for the catalogue's names: ML-KEM-768 → MLKEM768, ML-DSA-65 → MLDSA65,
SLH-DSA-SHA2-128s → SLHDSA_SHA2_128S, HQC-1 → HQC_1, Classic-McEliece-348864 →
CLASSIC_MCELIECE_348864."""


def identifier(name: str) -> str:
    for prefix, short in (("ML-KEM-", "MLKEM"), ("ML-DSA-", "MLDSA"), ("SLH-DSA-", "SLHDSA_")):
        if name.startswith(prefix):
            name = short + name[len(prefix):]
    return name.upper().replace("-", "_")
