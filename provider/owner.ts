import { createHash } from "crypto";

/** Who owns a setting on a host: one Pulumi resource in one stack of one project. */
export interface Owner {
  /** Human form `project/stack/name` (characters outside [A-Za-z0-9._:/@ -] replaced by `_`): shown in conflicts. */
  label: string;
  /** File-name-safe id: sanitised label + 8 hex of its sha256, so different raw names never collide. */
  id: string;
}

export function ownerOf(project: string, stack: string, name: string): Owner {
  const raw = `${project}/${stack}/${name}`;
  const hash = createHash("sha256").update(raw).digest("hex").slice(0, 8);
  const cleaned = raw.replace(/[^A-Za-z0-9._:/@ -]/g, "_").slice(0, 200);
  // Two raw names that sanitise alike ("a;b", "a%b") must still be two owners: the hash tells them apart.
  const label = cleaned === raw ? cleaned : `${cleaned}@${hash}`;
  const safe = `${project}.${stack}.${name}`.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[.-]+/, "").slice(0, 80);
  return { label, id: `${safe || "resource"}-${hash}` };
}

/** A name reduced to characters safe in file and unit names. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "-").replace(/^-+/, "").slice(0, 60) || "resource";
}
