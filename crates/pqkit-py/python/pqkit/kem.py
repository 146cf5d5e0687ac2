"""Key encapsulation: ML-KEM (FIPS 203), HQC, BIKE, eFrodoKEM, Classic McEliece.

One constant per KEM of the catalogue (MLKEM768, HQC_1, BIKE_L1, EFRODOKEM_640_AES,
CLASSIC_MCELIECE_348864, …); by_name() takes any name or alias.

    dk = pqkit.kem.MLKEM768.generate()
    shared_secret, ciphertext = dk.public_key().encapsulate()
    assert dk.decapsulate(ciphertext) == shared_secret
"""

from ._names import identifier as _identifier
from ._pqkit import DecapsulationKey, EncapsulationKey, Kem
from ._pqkit import kem_algorithms as algorithms
from ._pqkit import kem_by_name as by_name

__all__ = ["Kem", "EncapsulationKey", "DecapsulationKey", "algorithms", "by_name"]

for _kem in algorithms():
    globals()[_identifier(_kem.name)] = _kem
    __all__.append(_identifier(_kem.name))
del _kem
