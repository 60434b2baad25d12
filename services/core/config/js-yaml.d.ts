// Types for the parts of `js-yaml` (4.x, CommonJS, untyped) that yaml-data.ts uses.
declare module 'js-yaml' {
  interface TypeOptions {
    kind: 'scalar';
    resolve(data: string | null): boolean;
    construct(data: string): unknown;
  }
  class Type {
    constructor(tag: string, options: TypeOptions);
  }
  interface Schema {
    extend(types: { implicit: Type[] }): Schema;
  }
  interface LoadOptions {
    schema?: Schema;
    filename?: string;
    json?: boolean;
  }
  const jsyaml: {
    Type: typeof Type;
    FAILSAFE_SCHEMA: Schema;
    types: { null: Type; bool: Type };
    /** Throws a YAMLException on bad YAML. */
    load(text: string, options?: LoadOptions): unknown;
  };
  export default jsyaml;
}
