// Files imported `with { type: "text" }` (the web UI's stylesheet) are strings.
declare module "*.css" {
  const text: string;
  export default text;
}
