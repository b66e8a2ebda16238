// spdx-satisfies ships no types: its one export, as its README documents it.
declare module 'spdx-satisfies' {
  /** Whether an SPDX expression is satisfied by a list of simple licence ids. */
  export default function satisfies(expression: string, approved: string[]): boolean;
}
