import { describe, expect, it } from "vitest";
import { fillVariables, unknownVariables } from "../../src/domain/account/reply-variables.js";

// Saved replies' variables, as the console fills them when one is inserted and flags them in the editor.

describe("saved replies' variables", () => {
  const values = { "contact.name": "Ada", "contact.email": "", "operator.name": "Kim", "chatbot.name": "Shop bot" };

  it("fills the known ones, spaces inside the braces allowed", () => {
    expect(fillVariables("Hi {{contact.name}}, {{ operator.name }} of {{chatbot.name}} here.", values)).toEqual({
      text: "Hi Ada, Kim of Shop bot here.",
      empty: [],
      unknown: [],
    });
  });

  it("an empty value takes its fallback, else stays as written and is named", () => {
    expect(fillVariables('Write to {{contact.email | fallback: "us"}}.', values).text).toBe("Write to us.");
    expect(fillVariables("Write to {{contact.email|fallback:'us'}}.", values).text).toBe("Write to us.");
    expect(fillVariables("We answer {{ contact.email }} and {{contact.email}}.", values)).toEqual({
      text: "We answer {{ contact.email }} and {{contact.email}}.",
      empty: ["contact.email"],
      unknown: [],
    });
    expect(fillVariables("Hi {{contact.name}}", { "contact.name": "   " }).empty).toEqual(["contact.name"]);
  });

  it("leaves an unknown variable as written and names it; text without braces is untouched", () => {
    expect(fillVariables("Order {{order.id}} for {{contact.name}}", values)).toEqual({
      text: "Order {{order.id}} for Ada",
      empty: [],
      unknown: ["order.id"],
    });
    expect(unknownVariables("{{order.id}} {{ order.id }} {{contact.name}} {{Contact.Name}} {x}")).toEqual([
      "order.id",
      "Contact.Name",
    ]);
    expect(fillVariables("Use {braces} and }} {{ as they are", values).text).toBe("Use {braces} and }} {{ as they are");
  });
});
