// The ways a real service's answers go wrong after the work was done right: one task
// item malformed among good ones, a task nobody asked for, a failure message echoing the
// caller's Authorization header. Pure functions of an answer's data; the dice and the
// switches (faults.malformedTask, unrequestedTaskRate, echoAuthorization) are the caller's.

import type { MalformedKind } from "./EmulatorConfig.js";

type Item = Record<string, unknown>;

const isRecord = (v: unknown): v is Item => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether an item has the image task shape (B2, B3) rather than the A2 shape. */
const isImageShape = (item: Item): boolean => "task_id" in item;

const chargeValue = (kind: MalformedKind): unknown =>
  kind === "nan-charge" ? "NaN" : kind === "huge-charge" ? "1e309" : kind === "negative-charge" ? "-0.35" : 0.35;

/** A copy of one task item (either shape) broken the way `kind` says. */
export const malformTask = (item: Item, kind: MalformedKind): Item => {
  const image = isImageShape(item);
  switch (kind) {
    case "nan-charge":
    case "huge-charge":
    case "negative-charge":
    case "number-charge": {
      const amount = chargeValue(kind);
      if (image) return { ...item, final_unit_deduction: amount, final_balance_deduction: { quota: amount } };
      return { ...item, billing: [{ charge_type: "cash", cash_type: "balance", amount, currency: "USD", list_price: amount }] };
    }
    case "null-message":
      return image ? { ...item, task_status_msg: null, task_info: null } : { ...item, message: null, outputs: null };
    case "bad-status":
      return image ? { ...item, task_status: "exploded" } : { ...item, status: "exploded" };
    case "extra-fields": {
      // Fields the spec does not name, as a service adds them over time: on the task item
      // and on each charge (image items carry theirs as two fields, so one goes there).
      if (image) {
        const cash = item["final_balance_deduction"];
        return { ...item, region: "sg", ...(isRecord(cash) ? { final_balance_deduction: { ...cash, discount: "0.01" } } : {}) };
      }
      const billing = Array.isArray(item["billing"]) ? item["billing"] : [];
      return { ...item, region: "sg", billing: billing.map((b) => (isRecord(b) ? { ...b, discount: "0.01", promo: { code: "X" } } : b)) };
    }
    case "missing-id": {
      const { [image ? "task_id" : "id"]: _dropped, ...rest } = item;
      return rest;
    }
  }
};

/** The external id an item carries, in either shape. */
export const externalIdOf = (item: Item): string | undefined => {
  const v = isImageShape(item) ? (isRecord(item["task_info"]) ? item["task_info"]["external_task_id"] : undefined) : item["external_id"];
  return typeof v === "string" ? v : undefined;
};

/** A task that exists nowhere in the request: an id and external id nobody asked for. */
export const unrequestedTask = (shape: "video" | "image", n: number, now: number): Item => {
  const id = `9${String(n).padStart(15, "0")}`;
  return shape === "video"
    ? { id, status: "succeeded", message: "", create_time: now - 60_000, update_time: now, external_id: `unrequested-${n}`, outputs: [], billing: [] }
    : {
        task_id: id,
        task_status: "succeed",
        task_status_msg: "",
        task_info: { external_task_id: `unrequested-${n}` },
        task_result: { result_type: "single", images: [], series_images: [] },
        watermark_info: { enabled: false },
        created_at: now - 60_000,
        updated_at: now,
      };
};

/** Appends the Authorization value to the failure message of every failed item. */
export const echoInFailures = (item: Item, authorization: string): Item => {
  if (isImageShape(item)) {
    return item["task_status"] === "failed" ? { ...item, task_status_msg: `${String(item["task_status_msg"] ?? "")} (request ${authorization})` } : item;
  }
  return item["status"] === "failed" ? { ...item, message: `${String(item["message"] ?? "")} (request ${authorization})` } : item;
};

/** Applies `f` to every task item of an answer's data (A2 list, A3 page, B2 task, B3 list). */
export const mapTaskItems = (data: unknown, f: (item: Item) => Item): unknown => {
  if (Array.isArray(data)) return data.map((d) => (isRecord(d) ? f(d) : d));
  if (isRecord(data) && Array.isArray(data["result"])) return { ...data, result: mapTaskItems(data["result"], f) };
  if (isRecord(data) && "task_id" in data) return f(data);
  return data;
};
