//! An object's msgpack with some of its top-level attributes given as msgpack bytes: how a state is answered with a
//! large attribute exactly as the request carried it (or as the provider encoded it), without decoding and encoding
//! it again.

use super::decode::attribute_spans;
use crate::tfplugin::path::AttributePath;
use crate::tfplugin::value::ValueError;

/// `object` (the msgpack of an object, as [`encode`](super::encode) writes it) with the value of each attribute named
/// in `with` replaced by its bytes, which must be one well-formed msgpack item of the attribute's type each (the
/// caller's to ensure: they are not read). An attribute of `with` that `object` lacks is an error.
pub fn splice_attributes(object: &[u8], with: &[(&str, &[u8])]) -> Result<Vec<u8>, ValueError> {
    let spans = attribute_spans(object)?;
    if let Some((missing, _)) = with
        .iter()
        .find(|(name, _)| !spans.iter().any(|s| s.name == *name))
    {
        return Err(ValueError::new(
            &AttributePath::attr(*missing),
            "the object has no such attribute to replace",
        ));
    }
    let added: usize = with.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(object.len() + added);
    let mut copied = 0;
    for span in &spans {
        if let Some((_, bytes)) = with.iter().find(|(name, _)| *name == span.name) {
            out.extend_from_slice(&object[copied..span.range.start]);
            out.extend_from_slice(bytes);
            copied = span.range.end;
        }
    }
    out.extend_from_slice(&object[copied..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfplugin::value::msgpack::{decode, decode_unread, encode};
    use crate::tfplugin::value::{Type, Value};

    fn ty() -> Type {
        Type::object([
            ("big", Type::map(Type::object([("n", Type::Number)]))),
            ("name", Type::String),
            ("tags", Type::list(Type::String)),
        ])
    }

    fn big(n: i64) -> Value {
        Value::Map(
            (0..n)
                .map(|i| {
                    let entry = Value::object([("n", Value::int(i))]);
                    (format!("k{i:04}"), entry)
                })
                .collect(),
        )
    }

    #[test]
    fn a_spliced_object_decodes_as_the_object_with_those_values() {
        let whole = Value::object([
            ("big", big(300)),
            ("name", Value::string("n")),
            ("tags", Value::List(vec![Value::string("a")])),
        ]);
        let ty = ty();
        let received = encode(&whole, &ty).unwrap();
        // What a request carried, left undecoded, and where its bytes lie.
        let (read, spans) = decode_unread(&received, &ty, &["big", "tags"]).unwrap();
        assert!(read.get_attr("big").is_null() && read.get_attr("tags").is_null());
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["big", "tags"]);
        let big_bytes = &received[spans[0].range.clone()];
        assert_eq!(big_bytes, encode(&big(300), &ty_of("big")).unwrap());
        // An answer with another name, `big` as received and `tags` encoded apart.
        let mut answer = read.clone();
        answer.set_attr("name", Value::string("m"));
        let tags = Value::List(vec![Value::string("b"), Value::string("c")]);
        let tags_bytes = encode(&tags, &ty_of("tags")).unwrap();
        let encoded = encode(&answer, &ty).unwrap();
        let spliced =
            splice_attributes(&encoded, &[("big", big_bytes), ("tags", &tags_bytes)]).unwrap();
        let mut expected = whole.clone();
        expected.set_attr("name", Value::string("m"));
        expected.set_attr("tags", tags);
        assert_eq!(decode(&spliced, &ty).unwrap(), expected);
        assert_eq!(spliced, encode(&expected, &ty).unwrap());
        // Nothing to replace: the same bytes.
        assert_eq!(splice_attributes(&encoded, &[]).unwrap(), encoded);
    }

    #[test]
    fn an_attribute_the_object_lacks_is_refused_by_name() {
        let v = Value::object([("name", Value::string("n"))]);
        let bytes = encode(&v, &Type::object([("name", Type::String)])).unwrap();
        let err = splice_attributes(&bytes, &[("other", &[0xc0])]).unwrap_err();
        assert!(err.to_string().contains("other"), "{err}");
        // Not an object at all.
        assert!(splice_attributes(&[0x92, 0xc0, 0xc0], &[("x", &[0xc0])]).is_err());
    }

    fn ty_of(name: &str) -> Type {
        match ty() {
            Type::Object { attributes, .. } => attributes[name].clone(),
            _ => unreachable!(),
        }
    }
}
