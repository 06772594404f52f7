//! Fuzzes the msgpack `DynamicValue` decoder: arbitrary bytes against an input-chosen type must never panic,
//! and whatever decodes must re-encode and decode to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfplugin_fuzz::tfplugin::value::msgpack;
use tfplugin_fuzz::type_from_bytes;

fuzz_target!(|data: &[u8]| {
    let (ty, bytes) = type_from_bytes(data);
    if let Ok(value) = msgpack::decode(bytes, &ty) {
        let again = msgpack::encode(&value, &ty).expect("a decoded value re-encodes");
        let back = msgpack::decode(&again, &ty).expect("a re-encoded value decodes");
        assert_eq!(back, value);
    }
});
