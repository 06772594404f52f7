//! Fuzzes the JSON state decoder (`UpgradeResourceState`): arbitrary bytes against an input-chosen type must never
//! panic, and whatever decodes must encode to msgpack and back unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tfplugin_fuzz::tfplugin::value::{json, msgpack};
use tfplugin_fuzz::type_from_bytes;

fuzz_target!(|data: &[u8]| {
    let (ty, bytes) = type_from_bytes(data);
    if let Ok(value) = json::decode(bytes, &ty) {
        let packed = msgpack::encode(&value, &ty).expect("a decoded value encodes");
        assert_eq!(msgpack::decode(&packed, &ty).expect("and decodes"), value);
    }
});
