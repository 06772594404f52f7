# `removed` blocks with `lifecycle { destroy = false }` need Terraform >= 1.7. OpenTofu reads versions.tofu instead
# of this file.
terraform {
  required_version = ">= 1.7"
}
