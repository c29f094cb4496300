import express, { type RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";

const readForm = express.urlencoded({ extended: false, limit: "16kb", parameterLimit: 50 });

/** Console forms are small: over 16 KiB is 20008; an unreadable body (charset, encoding, too many fields) is 20001. */
export const formBody: RequestHandler = (req, res, next) => {
  readForm(req, res, (error?: unknown) => {
    if (!error) return next();
    const type = (error as { type?: string }).type;
    next(
      type === "entity.too.large" ? new ApiError(Err.BodyTooLarge, "Form body exceeds 16 KiB") : new ApiError(Err.BodyNotObject, "Form body could not be read"),
    );
  });
};
