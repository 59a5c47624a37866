// A TypeDoc plugin for `npm run docs`: the node REST JSON types are computed from the schema of src/model/objects.ts
// (key remapping to JSON names), so their fields have no declaration a doc comment could sit on. Each such field gets
// one fixed sentence instead, so validation.notDocumented still refuses every field that does have a declaration.
import { Comment, Converter, ReflectionKind } from "typedoc";

/** @param {import("typedoc").Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Property) || reflection.comment !== undefined) return;
    const symbol = context.getSymbolFromReflection(reflection);
    if (symbol === undefined || (symbol.declarations?.length ?? 0) > 0) return;
    reflection.comment = new Comment([
      { kind: "text", text: "A field of the node REST JSON form, derived from the model type's field of the same meaning (its JSON name may differ)." },
    ]);
  });
}
