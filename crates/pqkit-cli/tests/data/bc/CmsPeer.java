// Bouncy Castle's CMS (bcpkix 1.86) as a peer of `pqkit cms`, for crates/pqkit-cli/tests/interop_bc.rs:
//
//   sign SIGALG CERT.pem KEY.pem IN OUT attached|detached attrs|noattrs
//       SignedData (DER) by one signer: JcaContentSignerBuilder(SIGALG) over the PKCS#8 key,
//       the digest BC's DefaultDigestAlgorithmIdentifierFinder picks for it.
//   verify SIGNED [CONTENT]
//       Every SignerInformation verified against its certificate in the SignedData; prints
//       "OK|BAD <signature OID> <digest OID> attrs|noattrs" per signer; exit 1 if one is BAD.
//   hss-signer CA.pem CAKEY.pem CASIGALG OUTCERT.pem OUTKEY.pem
//       A two-level HSS key (LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8) made by BC, and a
//       code-signing certificate for it issued by the given CA (signed with CASIGALG).
import java.io.FileReader;
import java.io.FileWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Security;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.Collections;
import java.util.Date;

import org.bouncycastle.asn1.ASN1Encoding;
import org.bouncycastle.asn1.nist.NISTObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaCertStore;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.cms.CMSProcessableByteArray;
import org.bouncycastle.cms.CMSSignedData;
import org.bouncycastle.cms.CMSSignedDataGenerator;
import org.bouncycastle.cms.SignerInformation;
import org.bouncycastle.cms.jcajce.JcaSignerInfoGeneratorBuilder;
import org.bouncycastle.cms.jcajce.JcaSimpleSignerInfoVerifierBuilder;
import org.bouncycastle.jce.provider.BouncyCastleProvider;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.operator.jcajce.JcaDigestCalculatorProviderBuilder;
import org.bouncycastle.pqc.crypto.lms.LMOtsParameters;
import org.bouncycastle.pqc.crypto.lms.LMSigParameters;
import org.bouncycastle.pqc.jcajce.provider.BouncyCastlePQCProvider;
import org.bouncycastle.pqc.jcajce.spec.LMSHSSKeyGenParameterSpec;
import org.bouncycastle.pqc.jcajce.spec.LMSKeyGenParameterSpec;
import org.bouncycastle.util.Store;

public final class CmsPeer {
    public static void main(String[] a) throws Exception {
        Security.addProvider(new BouncyCastleProvider());
        Security.addProvider(new BouncyCastlePQCProvider());
        switch (a[0]) {
            case "sign": sign(a[1], a[2], a[3], a[4], a[5], a[6].equals("attached"), a[7].equals("attrs")); break;
            case "verify": System.exit(verify(a[1], a.length > 2 ? a[2] : null)); break;
            case "hss-signer": hssSigner(a[1], a[2], a[3], a[4], a[5]); break;
            default: throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    static X509CertificateHolder cert(String path) throws Exception {
        try (PEMParser p = new PEMParser(new FileReader(path))) {
            return (X509CertificateHolder) p.readObject();
        }
    }

    static PrivateKey key(String path) throws Exception {
        try (PEMParser p = new PEMParser(new FileReader(path))) {
            Object o = p.readObject();
            return new JcaPEMKeyConverter().setProvider("BC").getPrivateKey((PrivateKeyInfo) o);
        }
    }

    static void sign(String sigAlg, String certPath, String keyPath, String in, String out,
                     boolean attached, boolean attrs) throws Exception {
        X509CertificateHolder cert = cert(certPath);
        ContentSigner signer = new JcaContentSignerBuilder(sigAlg).setProvider("BC").build(key(keyPath));
        JcaSignerInfoGeneratorBuilder b = new JcaSignerInfoGeneratorBuilder(
            new JcaDigestCalculatorProviderBuilder().setProvider("BC").build());
        b.setDirectSignature(!attrs);
        if (sigAlg.equals("LMS")) {
            // BC names no default digest for HSS/LMS: SHA-256 (RFC 9708 §4).
            b.setContentDigest(new AlgorithmIdentifier(NISTObjectIdentifiers.id_sha256));
        }
        CMSSignedDataGenerator gen = new CMSSignedDataGenerator();
        gen.addSignerInfoGenerator(b.build(signer, cert));
        gen.addCertificates(new JcaCertStore(Collections.singletonList(cert)));
        CMSSignedData sd = gen.generate(new CMSProcessableByteArray(Files.readAllBytes(Paths.get(in))), attached);
        Files.write(Paths.get(out), sd.toASN1Structure().getEncoded(ASN1Encoding.DER));
    }

    static int verify(String signed, String content) throws Exception {
        byte[] bytes = Files.readAllBytes(Paths.get(signed));
        CMSSignedData sd = content == null
            ? new CMSSignedData(bytes)
            : new CMSSignedData(new CMSProcessableByteArray(Files.readAllBytes(Paths.get(content))), bytes);
        Store<X509CertificateHolder> certs = sd.getCertificates();
        int rc = 0;
        for (SignerInformation si : sd.getSignerInfos().getSigners()) {
            @SuppressWarnings("unchecked")
            Collection<X509CertificateHolder> found = certs.getMatches(si.getSID());
            boolean ok;
            try {
                ok = !found.isEmpty() && si.verify(
                    new JcaSimpleSignerInfoVerifierBuilder().setProvider("BC").build(found.iterator().next()));
            } catch (Exception e) {
                System.out.println("error " + e);
                ok = false;
            }
            System.out.println((ok ? "OK " : "BAD ") + si.getEncryptionAlgOID() + " " + si.getDigestAlgOID()
                + (si.getSignedAttributes() != null ? " attrs" : " noattrs"));
            if (!ok) {
                rc = 1;
            }
        }
        return rc;
    }

    static void hssSigner(String caPath, String caKeyPath, String caSigAlg, String outCert, String outKey)
            throws Exception {
        KeyPairGenerator kpg = KeyPairGenerator.getInstance("LMS", "BC");
        LMSKeyGenParameterSpec level = new LMSKeyGenParameterSpec(LMSigParameters.lms_sha256_n32_h5,
            LMOtsParameters.sha256_n32_w8);
        kpg.initialize(new LMSHSSKeyGenParameterSpec(level, level), new SecureRandom());
        KeyPair kp = kpg.generateKeyPair();
        X509CertificateHolder ca = cert(caPath);
        X509Certificate caCert = new JcaX509CertificateConverter().setProvider("BC").getCertificate(ca);
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        long now = System.currentTimeMillis();
        JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca.getSubject(),
            BigInteger.valueOf(now), new Date(now - 60_000L), new Date(now + 30L * 86_400_000L),
            new X500Name("CN=BC HSS signer"), kp.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_codeSigning));
        b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
        b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(caCert));
        X509CertificateHolder leaf = b.build(
            new JcaContentSignerBuilder(caSigAlg).setProvider("BC").build(key(caKeyPath)));
        try (JcaPEMWriter w = new JcaPEMWriter(new FileWriter(outCert))) {
            w.writeObject(leaf);
        }
        try (JcaPEMWriter w = new JcaPEMWriter(new FileWriter(outKey))) {
            w.writeObject(kp.getPrivate());
        }
    }
}
