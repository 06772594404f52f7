//! The main crate's plugin-layer modules needed by the codecs, compiled from its sources.

#[path = "../../src/tfplugin/diag.rs"]
pub mod diag;
#[path = "../../src/tfplugin/path.rs"]
pub mod path;
#[path = "../../src/tfplugin/schema/mod.rs"]
pub mod schema;
#[path = "../../src/tfplugin/value/mod.rs"]
pub mod value;
