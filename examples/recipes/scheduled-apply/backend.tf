# Where the state lives: a placeholder. Pick the backend your CI can reach and that locks (s3 with a lock, gcs,
# azurerm, or `http` for GitLab-managed state), and give its settings at `init` time
# (`init -backend-config=...` or the backend's environment variables), never in this file.
terraform {
  backend "s3" {}
}
