//! `scripts/install`, the install path that works before (and without) a registry: it packages the provider
//! binary cargo built for these tests as a release zip into `~/.terraform.d/plugins` (the implied local mirror of
//! both CLIs) of a fresh `HOME`, and then a plain `init` of the README's configuration installs it with every CLI
//! (`tofu`, `terraform-1.0.3`, the `terraform` on PATH): no CLI configuration file, no `dev_overrides`, no
//! registry; `validate` runs the installed binary. With `--dir`, or when the CLI configuration has a
//! `provider_installation` block (which turns implied mirrors off), it prints a `filesystem_mirror` block, and
//! `init` with exactly that block as the CLI configuration installs from the directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{Cli, PROVIDER_HOSTS, PROVIDER_SOURCE, Tf};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const NAME: &str = "terraform-provider-sveltos";

/// The first ```terraform block of the README's "## Usage" section: what a new user copies.
fn readme_configuration() -> String {
    let readme = std::fs::read_to_string(support::repo_root().join("README.md")).unwrap();
    let usage = &readme[readme
        .find("\n## Usage")
        .expect("README has a Usage section")..];
    let start = usage
        .find("```terraform\n")
        .expect("a terraform block in Usage")
        + "```terraform\n".len();
    let block = &usage[start..start + usage[start..].find("```").unwrap()];
    assert!(
        block.contains("source = \"clusterinventory/sveltos\"") && !block.contains("dev_overrides"),
        "{block}"
    );
    block.to_string()
}

/// `scripts/install ARGS` with `HOME=home` and no CLI configuration in the environment; asserts success.
fn install(home: &Path, args: &[&str], binary: &Path) -> Output {
    let out = Command::new(support::repo_root().join("scripts").join("install"))
        .arg("--binary")
        .arg(binary)
        .args(args)
        .env("HOME", home)
        .env_remove("TF_CLI_CONFIG_FILE")
        .env_remove("TOFU_CLI_CONFIG_FILE")
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("running scripts/install");
    assert!(
        out.status.success(),
        "scripts/install {args:?} failed:\n{}",
        support::describe_output(&out)
    );
    out
}

/// `init` as a user runs it: `HOME=home`, the CLI configuration `config` (none: the CLI's defaults, which for a
/// fresh HOME means no file at all), nothing else from the test environment.
fn init(tf: &Tf, home: &Path, config: Option<&Path>) -> String {
    let mut cmd = tf.command(&["init", "-input=false", "-no-color"]);
    cmd.env("HOME", home)
        .env_remove("TOFU_CLI_CONFIG_FILE")
        .env_remove("XDG_DATA_HOME");
    match config {
        Some(file) => cmd.env("TF_CLI_CONFIG_FILE", file),
        None => cmd.env_remove("TF_CLI_CONFIG_FILE"),
    };
    let out = cmd.output().expect("running init");
    let text = support::describe_output(&out);
    assert!(
        out.status.success(),
        "{}: init failed:\n{text}",
        tf.cli.name
    );
    assert!(
        !text.to_lowercase().contains("development overrides"),
        "{}: init used dev_overrides:\n{text}",
        tf.cli.name
    );
    text
}

/// The provider binary `init` unpacked into the working directory.
fn installed_binary(tf: &Tf) -> PathBuf {
    let host = if tf.cli.is_tofu() {
        "registry.opentofu.org"
    } else {
        "registry.terraform.io"
    };
    tf.dir()
        .join(".terraform/providers")
        .join(host)
        .join(PROVIDER_SOURCE)
        .join(VERSION)
        .join(support::release_platform())
        .join(format!("{NAME}_v{VERSION}"))
}

#[test]
fn installed_provider_is_found_by_a_plain_init_of_the_readme_configuration() {
    let home = tempfile::tempdir().unwrap();
    let binary = support::provider_binary();
    let out = install(home.path(), &[], &binary);
    assert!(
        out.stdout.is_empty(),
        "no CLI configuration to print: {out:?}"
    );
    let zip = format!("{NAME}_{VERSION}_{}.zip", support::release_platform());
    for host in PROVIDER_HOSTS {
        let at = home
            .path()
            .join(".terraform.d/plugins")
            .join(host)
            .join(PROVIDER_SOURCE)
            .join(&zip);
        assert!(at.is_file(), "{} is missing", at.display());
    }

    let configuration = readme_configuration();
    for cli in Cli::all() {
        let tf = Tf::new(&cli);
        tf.write_main(&configuration);
        init(&tf, home.path(), None);
        let installed = installed_binary(&tf);
        assert_eq!(
            std::fs::read(&installed).unwrap_or_else(|e| panic!("{}: {e}", installed.display())),
            std::fs::read(&binary).unwrap(),
            "{}: the installed provider is the binary given to scripts/install",
            cli.name
        );
        let lock = std::fs::read_to_string(tf.dir().join(".terraform.lock.hcl")).unwrap();
        assert!(
            lock.contains(&format!("version     = \"{VERSION}\"")),
            "{lock}"
        );
        // The installed binary runs: validate loads its schema and validates the README's resource with it.
        let mut validate = tf.command(&["validate", "-no-color"]);
        validate
            .env("HOME", home.path())
            .env_remove("TF_CLI_CONFIG_FILE");
        let out = validate.output().unwrap();
        assert!(
            out.status.success(),
            "{}: validate:\n{}",
            cli.name,
            support::describe_output(&out)
        );
    }
}

#[test]
fn a_mirror_elsewhere_or_an_explicit_cli_configuration_gets_the_block_to_add() {
    // What is installed does not matter here (the test above checks it): a stand-in that says its version.
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join(NAME);
    support::write_executable(&binary, &format!("#!/bin/sh\necho {NAME} {VERSION}\n"));
    let configuration = readme_configuration();

    // An explicit provider_installation turns implied mirrors off: the script says so and prints the block.
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".terraformrc"),
        "provider_installation {\n  direct {}\n}\n",
    )
    .unwrap();
    let out = install(&home, &[], &binary);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("turns the implied mirror"),
        "{}",
        support::describe_output(&out)
    );
    let block = String::from_utf8(out.stdout).unwrap();
    let implied = home.join(".terraform.d/plugins");
    assert!(
        block.contains(&format!("path    = \"{}\"", implied.display())),
        "{block}"
    );

    // --dir: the block names that directory, and init with exactly that block as the CLI configuration works.
    let dir = work.path().join("mirror");
    let out = install(&home, &["--dir", dir.to_str().unwrap()], &binary);
    let block = String::from_utf8(out.stdout).unwrap();
    let config = work.path().join("cli.tfrc");
    std::fs::write(&config, &block).unwrap();
    std::fs::remove_dir_all(&implied).unwrap();
    for cli in [Cli::tofu(), Cli::terraform_1_0_3()] {
        let tf = Tf::new(&cli);
        tf.write_main(&configuration);
        let text = init(&tf, &home, Some(&config));
        assert!(installed_binary(&tf).is_file(), "{}: {text}", cli.name);
    }
}
