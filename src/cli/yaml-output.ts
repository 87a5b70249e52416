// YAML as `-o yaml` prints it. Quoted by YAML 1.1's rules, which kubectl's printer (go-yaml)
// and PyYAML (Ansible) read by: a string such as "on", "no", "2026-01-01", "12:30" or a
// timestamp printed bare is a boolean, a date or a number to them, so an export could not be
// applied back ("cannot unmarshal bool into ... annotations of type string").

/** The YAML text; the printer is loaded only when asked for (a table needs none of it). */
export async function printedYaml(value: unknown): Promise<string> {
  const { default: YAML } = await import('yaml');
  return YAML.stringify(value, { version: '1.1' });
}
