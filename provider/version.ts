/** The package version written into every file and report this library puts on a host. */
export const PACKAGE_NAME = "pulumi-net-tuning";
export const PACKAGE_VERSION = "0.3.0";
