//! The command line (SPEC §8), parsed by clap. Usage errors exit 2 (clap's own handling);
//! runtime errors exit 1 with one line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "signupd", version, about = "A self-contained double opt-in signup service", propagate_version = true)]
pub struct Cli {
    /// Configuration file (TOML). Without one, signupd runs the zero-setup demo.
    #[arg(long, global = true, env = "SIGNUPD_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Migrate, then serve HTTP, run the mail worker and the scheduler.
    Serve,
    /// Validate the configuration and print it with secrets redacted.
    CheckConfig,
    /// Apply database migrations and exit.
    Migrate,
    /// Print a new random secret (for token_secret_file or hash_key_file).
    GenSecret,
    /// Send one mail through the configured transport and report the SMTP result.
    SendTestMail {
        /// Recipient address.
        #[arg(long, value_name = "ADDR")]
        to: String,
        /// The list whose sender and name to use (default: the first list).
        #[arg(long, value_name = "ID")]
        list: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn config_is_accepted_after_the_subcommand() {
        let cli = Cli::try_parse_from(["signupd", "serve", "--config", "x.toml"]).unwrap();
        assert_eq!(cli.config, Some(PathBuf::from("x.toml")));
        assert!(matches!(cli.command, Command::Serve));
    }

    #[test]
    fn an_unknown_subcommand_is_a_usage_error() {
        let error = Cli::try_parse_from(["signupd", "frobnicate"]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
    }
}
