//! BER to DER for CMS input (X.690 §8 → §10): Bouncy Castle writes SignedData with
//! indefinite lengths and the content as a constructed OCTET STRING in chunks, which the `der`
//! decoder refuses. Lengths become definite and minimal, and a constructed OCTET STRING
//! becomes one primitive OCTET STRING; everything else is copied as it is. The verifier then
//! re-encodes the signed attributes from what it decoded, which for attributes that were DER
//! when signed (as RFC 5652 §5.4 requires) gives back the bytes signed.
//!
//! A parser of untrusted bytes: bounded nesting ([`MAX_DEPTH`]), every length checked against
//! what is left, errors instead of panics.

/// The deepest nesting accepted (a SignedData with a certificate is about 12 deep).
pub(crate) const MAX_DEPTH: usize = 64;

/// The input as DER: rebuilt element by element; the input itself (borrowed) when nothing
/// changed.
///
/// # Errors
/// What is malformed, in words.
pub(crate) fn to_der(input: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    let mut out = Vec::with_capacity(input.len());
    let (used, changed) = element(input, 0, &mut out)?;
    if used != input.len() {
        return Err(format!("{} bytes after the end", input.len() - used));
    }
    Ok(if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(input)
    })
}

/// The identifier octets at the start of `input`: their length, whether constructed, and the
/// tag byte (the first octet).
fn identifier(input: &[u8]) -> Result<(usize, bool, u8), String> {
    let first = *input.first().ok_or("truncated: a tag expected")?;
    let mut len = 1;
    if first & 0x1f == 0x1f {
        // High tag number form: base-128 octets, the last without bit 8.
        loop {
            let b = *input.get(len).ok_or("truncated tag")?;
            len += 1;
            if b & 0x80 == 0 {
                break;
            }
            if len > 5 {
                return Err("tag number too large".into());
            }
        }
    }
    Ok((len, first & 0x20 != 0, first))
}

/// The length octets at `input`: their count and the length (`None`: indefinite).
fn length(input: &[u8]) -> Result<(usize, Option<usize>), String> {
    let first = *input.first().ok_or("truncated: a length expected")?;
    if first < 0x80 {
        return Ok((1, Some(usize::from(first))));
    }
    if first == 0x80 {
        return Ok((1, None));
    }
    let n = usize::from(first & 0x7f);
    if n > 4 {
        return Err("length over 4 GiB".into());
    }
    let bytes = input.get(1..1 + n).ok_or("truncated length")?;
    let len = bytes
        .iter()
        .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
    Ok((1 + n, Some(len)))
}

fn put_length(out: &mut Vec<u8>, len: usize) {
    if let Ok(short @ 0..0x80) = u8::try_from(len) {
        out.push(short);
        return;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    // At most 8 length octets: the count fits bits 1–7.
    out.push(0x80 | u8::try_from(bytes.len() - skip).unwrap_or(0x7f));
    out.extend_from_slice(&bytes[skip..]);
}

/// Copies one element from the start of `input` to `out` as DER; returns the input bytes it
/// took and whether anything changed.
fn element(input: &[u8], depth: usize, out: &mut Vec<u8>) -> Result<(usize, bool), String> {
    if depth > MAX_DEPTH {
        return Err("nested too deep".into());
    }
    let (tag_len, constructed, tag) = identifier(input)?;
    let (len_len, len) = length(&input[tag_len..])?;
    let start = tag_len + len_len;
    if !constructed {
        let len = len.ok_or("indefinite length on a primitive element")?;
        let end = start
            .checked_add(len)
            .filter(|e| *e <= input.len())
            .ok_or("truncated contents")?;
        let minimal = {
            let mut l = Vec::new();
            put_length(&mut l, len);
            l == input[tag_len..start]
        };
        out.extend_from_slice(&input[..tag_len]);
        put_length(out, len);
        out.extend_from_slice(&input[start..end]);
        return Ok((end, !minimal));
    }
    // Constructed: the children, up to the end or to the end-of-contents octets.
    let limit = match len {
        Some(l) => start
            .checked_add(l)
            .filter(|e| *e <= input.len())
            .ok_or("truncated contents")?,
        None => input.len(),
    };
    let mut body = Vec::new();
    let mut at = start;
    let mut changed = len.is_none();
    let octet_chunks = tag == 0x24;
    loop {
        if len.is_none() && input.get(at..at + 2) == Some(&[0, 0]) {
            at += 2;
            break;
        }
        if at == limit {
            if len.is_none() {
                return Err("no end-of-contents octets".into());
            }
            break;
        }
        let (used, child_changed) = element(&input[at..limit], depth + 1, &mut body)?;
        at += used;
        changed |= child_changed;
    }
    if octet_chunks {
        // A constructed OCTET STRING: its primitive chunks' contents, as one.
        let mut joined = Vec::new();
        let mut rest = &body[..];
        while !rest.is_empty() {
            let (t, c, first) = identifier(rest)?;
            let (l, n) = length(&rest[t..])?;
            let n = n.ok_or("indefinite chunk")?;
            if c || first != 0x04 {
                return Err("an OCTET STRING chunk that is not a primitive OCTET STRING".into());
            }
            let s = t + l;
            joined.extend_from_slice(rest.get(s..s + n).ok_or("truncated chunk")?);
            rest = &rest[s + n..];
        }
        out.push(0x04);
        put_length(out, joined.len());
        out.extend_from_slice(&joined);
        return Ok((at, true));
    }
    out.extend_from_slice(&input[..tag_len]);
    put_length(out, body.len());
    out.extend_from_slice(&body);
    if let Some(l) = len {
        let mut canonical = Vec::new();
        put_length(&mut canonical, l);
        changed |= canonical != input[tag_len..start];
    }
    Ok((at, changed))
}

#[cfg(test)]
mod tests {
    use super::to_der;

    #[test]
    fn indefinite_lengths_and_chunked_octets_become_der() {
        // SEQUENCE (indefinite) { [0] (indefinite) { OCTET STRING (constructed, indefinite)
        // { "ab", "c" } } INTEGER 5 }
        let ber = [
            0x30, 0x80, 0xa0, 0x80, 0x24, 0x80, 0x04, 0x02, b'a', b'b', 0x04, 0x01, b'c', 0, 0, 0,
            0, 0x02, 0x01, 5, 0, 0,
        ];
        let der = to_der(&ber).expect("BER");
        assert_eq!(
            &der[..],
            &[
                0x30, 0x0a, 0xa0, 0x05, 0x04, 0x03, b'a', b'b', b'c', 0x02, 0x01, 5
            ]
        );
        // DER stays borrowed.
        let again = to_der(&der).expect("DER");
        assert!(matches!(again, std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn malformed_input_is_an_error() {
        for bad in [
            &[0x30, 0x80][..],               // no end-of-contents
            &[0x30, 0x05, 0x02, 0x01],       // truncated
            &[0x04, 0x80, 0x00, 0x00],       // indefinite primitive
            &[0x30, 0x85, 1, 0, 0, 0, 0],    // length over 4 GiB
            &[0x02, 0x01, 0x05, 0x00],       // trailing byte
            &[0x24, 0x03, 0x02, 0x01, 0x05], // chunk of another type
        ] {
            assert!(to_der(bad).is_err(), "{bad:02x?}");
        }
        let deep: Vec<u8> = std::iter::repeat_n([0x30u8, 0x80], 100).flatten().collect();
        assert!(to_der(&deep).is_err());
    }
}
