import sharp from "sharp";

/** A photo as a phone takes it: a JPEG whose EXIF holds the camera and where it was taken (GPS). */
export function gpsTaggedJpeg(): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: "#c33" } })
    .jpeg()
    .withExif({
      IFD0: { Make: "PhoneCam", Model: "X1" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 24/1", GPSLongitudeRef: "E", GPSLongitude: "2/1 21/1 3/1" },
    })
    .toBuffer();
}

/**
 * The number of GPS tags in an image's EXIF (0 when it has no EXIF or no GPS directory): the EXIF as sharp reads it,
 * its TIFF directory walked to the GPS pointer (tag 0x8825) and that directory's entry count read.
 */
export async function gpsTagCount(image: Uint8Array): Promise<number> {
  const exif = (await sharp(image).metadata()).exif;
  if (!exif) return 0;
  // "Exif\0\0", then a TIFF header: byte order, 42, the first directory's offset.
  const tiff = exif.subarray(exif.subarray(0, 6).toString("latin1") === "Exif\0\0" ? 6 : 0);
  const le = tiff.toString("latin1", 0, 2) === "II";
  const u16 = (at: number) => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (le ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd0 = u32(4);
  for (let i = 0; i < u16(ifd0); i++) {
    const entry = ifd0 + 2 + i * 12;
    if (u16(entry) === 0x8825) return u16(u32(entry + 8));
  }
  return 0;
}

/** An image's size and format, as decoded. */
export async function imageInfo(image: Uint8Array) {
  const m = await sharp(image).metadata();
  return { format: m.format, width: m.width, height: m.height };
}
