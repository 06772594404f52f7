//! Configuration blocks that several resources and data sources share, each defined once: its schema and the
//! mapping between its Terraform value and the core's type (the core's problems become diagnostics through
//! `provider::diag`). The provider block ([`provider_config`]) and `inventory` blocks share the connection
//! attributes of [`connection`].

pub mod connection;
pub mod credentials;
pub mod inventory;
pub mod provider_config;
pub mod selection;
