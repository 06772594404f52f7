//! Docs and examples follow the provider's schema: every resource and data source has a registry docs page whose
//! "Schema" section is the one generated from its schema (`UPDATE_DOCS=1 cargo test --test plugin docs::` rewrites them)
//! and embeds its example verbatim, and every example under `examples/` passes `validate` with the real CLIs.
//! This is the one docs check: other test files test behaviour.

use std::path::{Path, PathBuf};

use support::{Cli, Tf};
use tfsveltos::{
    provider::{blocks::provider_config, registry},
    tfplugin::{
        Schema,
        docs::{schema_section, splice},
    },
};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A registry docs page, the schema it documents, and the example it embeds.
struct Page {
    path: PathBuf,
    schema: Schema,
    example: PathBuf,
}

fn pages() -> Vec<Page> {
    let p = registry::new();
    let mut out = vec![Page {
        path: repo().join("docs/index.md"),
        schema: p.schema(),
        example: repo().join("examples/provider/provider.tf"),
    }];
    for r in p.resources() {
        let short = r.type_name().trim_start_matches("sveltos_");
        out.push(Page {
            path: repo().join(format!("docs/resources/{short}.md")),
            schema: r.schema(),
            example: repo().join(format!("examples/resources/{}/resource.tf", r.type_name())),
        });
    }
    for d in p.data_sources() {
        let short = d.type_name().trim_start_matches("sveltos_");
        out.push(Page {
            path: repo().join(format!("docs/data-sources/{short}.md")),
            schema: d.schema(),
            example: repo().join(format!(
                "examples/data-sources/{}/data-source.tf",
                d.type_name()
            )),
        });
    }
    for e in p.ephemeral_resources() {
        let short = e.type_name().trim_start_matches("sveltos_");
        out.push(Page {
            path: repo().join(format!("docs/ephemeral-resources/{short}.md")),
            schema: e.schema(),
            example: repo().join(format!(
                "examples/ephemeral-resources/{}/ephemeral-resource.tf",
                e.type_name()
            )),
        });
    }
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn docs_schema_sections_are_generated_from_the_schema() {
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for Page { path, schema, .. } in pages() {
        let page = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (every resource and data source needs a docs page)",
                path.display()
            )
        });
        let want = splice(&page, &schema_section(&schema));
        if want != page {
            if update {
                std::fs::write(&path, &want).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "docs disagree with the schema (run `UPDATE_DOCS=1 cargo test --test plugin docs::` and review): {stale:?}"
    );
}

#[test]
fn every_page_embeds_its_example() {
    let pages = pages();
    assert!(pages.len() >= 4, "pages missing: {}", pages.len());
    for page in pages {
        let doc = read(&page.path);
        let example = read(&page.example);
        assert!(
            doc.contains(example.trim_end()),
            "{} does not embed {} verbatim",
            page.path.display(),
            page.example.display()
        );
    }
}

#[test]
fn generated_section_names_every_attribute_with_its_kind() {
    let schema = tfsveltos::provider::resources::cluster_inventory_bridge::schema();
    let section = schema_section(&schema);
    for a in &schema.block.attributes {
        assert!(
            section.contains(&format!("- `{}` (", a.name)),
            "{} missing",
            a.name
        );
    }
    assert!(section.contains("### Required\n\n- `name` (String)"));
    assert!(section.contains("- `clusters` (Map of Object)"));
    assert!(section.contains("- `overrides` (Attributes Map)"));
    assert!(section.contains("- `credentials` (Block, Optional)"));
    let provider = schema_section(&provider_config::config_schema());
    assert!(provider.contains("- `token` (String, Sensitive)"));
    assert!(provider.contains("- `client_key` (String, Sensitive)"));
}

fn example_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut has_tf = false;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "tf") {
                has_tf = true;
            }
        }
        if has_tf {
            out.push(dir.to_path_buf());
        }
    }
    walk(&repo().join("examples"), &mut out);
    // The recipes need more than the provider (the kubectl provider, CLI versions with `removed` blocks):
    // tests/e2e/recipes.rs validates them with every CLI.
    out.retain(|d| !d.starts_with(repo().join("examples/recipes")));
    out.sort();
    out
}

#[test]
fn every_example_validates_with_every_cli() {
    let dirs = example_dirs();
    assert!(dirs.len() >= 5, "examples missing: {dirs:?}");
    let provider_tf =
        std::fs::read_to_string(repo().join("examples/provider/provider.tf")).unwrap();
    for cli in Cli::all() {
        for dir in &dirs {
            let tf = Tf::new(&cli);
            let mut has_provider = false;
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "tf") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    has_provider |= text.contains("required_providers");
                    tf.write_file(p.file_name().unwrap().to_str().unwrap(), &text);
                }
            }
            if !has_provider {
                tf.write_file("provider.tf", &provider_tf);
            }
            // Files the examples read (providers files) may be referenced relative to the module.
            let out = tf.run(&["validate", "-no-color"]);
            // Ephemeral resources need Terraform >= 1.10 / OpenTofu >= 1.11: older CLIs must reject the block
            // itself (not our schema).
            if uses_ephemeral(dir) && cli.name == Cli::terraform_1_0_3().name {
                let text = support::describe_output(&out);
                assert!(
                    !out.status.success() && text.contains("Unsupported block type"),
                    "{} validate of {}: expected the ephemeral block to be rejected:\n{text}",
                    cli.name,
                    dir.display()
                );
                continue;
            }
            assert!(
                out.status.success(),
                "{} validate of {} failed:\n{}",
                cli.name,
                dir.display(),
                support::describe_output(&out)
            );
        }
    }
}

/// Whether an example directory declares an ephemeral resource.
fn uses_ephemeral(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        e.path().extension().is_some_and(|x| x == "tf")
            && std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .contains("\nephemeral \"")
    })
}
