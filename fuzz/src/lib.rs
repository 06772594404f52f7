//! The plugin layer's value codecs, compiled from the main crate's sources (`../src/tfplugin/`) so that fuzzing
//! does not build the whole provider (and its Kubernetes client). The module tree mirrors the main crate, so the
//! sources' `crate::tfplugin::...` paths resolve unchanged.

#![allow(dead_code)]

pub mod tfplugin;

use tfplugin::value::Type;

/// Builds a type from fuzz input bytes (a small, bounded interpretation), then returns the rest of the input.
pub fn type_from_bytes(data: &[u8]) -> (Type, &[u8]) {
    fn build(data: &mut &[u8], depth: usize) -> Type {
        let Some((&b, rest)) = data.split_first() else {
            return Type::Dynamic;
        };
        *data = rest;
        let kind = if depth >= 4 { b % 4 } else { b % 9 };
        match kind {
            0 => Type::String,
            1 => Type::Number,
            2 => Type::Bool,
            3 => Type::Dynamic,
            4 => Type::list(build(data, depth + 1)),
            5 => Type::set(build(data, depth + 1)),
            6 => Type::map(build(data, depth + 1)),
            7 => {
                let n = (b >> 4) % 4;
                Type::object(
                    (0..n)
                        .map(|i| (format!("a{i}"), build(data, depth + 1)))
                        .collect::<Vec<_>>(),
                )
            }
            _ => {
                let n = (b >> 4) % 4;
                Type::tuple((0..n).map(|_| build(data, depth + 1)).collect::<Vec<_>>())
            }
        }
    }
    let mut rest = data;
    let ty = build(&mut rest, 0);
    (ty, rest)
}
