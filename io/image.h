/* image.h: image inputs (docs/architecture.md §8): JPEG (libjpeg) and PNG (libpng) decoding to
 * 8-bit RGB, and the preprocessing an Input op describes (resize with bilinear half-pixel
 * sampling as ONNX Resize, aspect-keeping resize + center crop as torchvision, mean/scale). */
#ifndef CT_IMAGE_H
#define CT_IMAGE_H

#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "ir/ir.h"

/* A decoded image: height × width × 3 bytes, row-major HWC, RGB, 0..255. */
typedef struct ct_image {
  int64_t h, w;
  uint8_t *rgb; /* owned (ct_image_free) */
} ct_image;

/* Pixel formats of the preprocessing. */
typedef enum ct_pixel_format { CT_PIX_RGB, CT_PIX_BGR, CT_PIX_GRAY } ct_pixel_format;

/* Preprocessing of one image input (the Input op's attributes pixel_format, resize_dims,
 * keep_aspect_ratio, mean, scale). mean/scale hold 1 value (all channels) or one per
 * channel. */
/* Letterbox padding (TPU-MLIR model_transform --pad_type): none = center crop. */
typedef enum ct_pad_type { CT_PAD_NONE, CT_PAD_NORMAL, CT_PAD_CENTER } ct_pad_type;

typedef struct ct_image_prep {
  ct_pixel_format format;
  int64_t resize_h, resize_w;   /* 0 = the input's H×W */
  int keep_aspect_ratio;        /* 1: scale so the image covers resize_h×resize_w, keep aspect */
  ct_pad_type pad;              /* not none: fit inside resize_h×resize_w and pad (letterbox) */
  double pad_value;             /* padding pixel value, 0..255 (before mean/scale) */
  int n_mean, n_scale;          /* 0 = mean 0 / scale 1 */
  double mean[4], scale[4];
} ct_image_prep;

/* True if the file starts with a JPEG (FF D8 FF) or PNG (89 'PNG' 0D 0A 1A 0A) signature. */
bool ct_image_is_image_file(const char *path);

/* Decodes a JPEG or PNG (chosen by the file's signature, not its name) into img: gray and
 * palette images are expanded to RGB, alpha is dropped, 16-bit samples reduced to 8.
 * Errors: CT_ERR_INPUT naming the file (unreadable, not JPEG/PNG, corrupt data; libjpeg's or
 * libpng's message is quoted); CT_ERR_LIMIT (out of memory, image over 2^28 pixels). */
ct_status ct_image_load(const char *path, ct_image *img, ct_diag *d);

/* Frees img's pixels (img itself is the caller's). */
void ct_image_free(ct_image *img);

/* Reads the preprocessing attributes of an Input op into p. Defaults when absent:
 * pixel_format "rgb" if the input has 3 channels, "gray" if 1; resize_dims = input H×W;
 * keep_aspect_ratio 0; pad_type none, pad_value 0; mean 0; scale 1 (a pad type implies
 * keep_aspect_ratio). Errors: CT_ERR_INPUT naming the input value and the attribute
 * (unknown pixel_format or pad_type, pad_value outside 0..255, resize_dims not 2 positive
 * ints, mean/scale length not 1 or C, input not N×C×H×W float32 with N = 1 and C = 3 (rgb/bgr) or 1 (gray)). */
ct_status ct_image_prep_from_op(const ct_op *input_op, ct_image_prep *p, ct_diag *d);

/* Preprocesses img into a new float32 tensor of shape 1×C×H×W (NCHW) named `name`:
 *  1. resize target R = resize_h×resize_w (default H×W); with keep_aspect_ratio the scale
 *     s = max(resize_h/h, resize_w/w) is applied to both sides (rounded half up), so the
 *     shorter side fits R (torchvision Resize(int) then CenterCrop);
 *     With a pad type (letterbox, as YOLOX and TPU-MLIR's --pad_type) the scale is
 *     s = min(resize_h/h, resize_w/w) instead, the sides rounded down (cv2.resize as YOLOX
 *     calls it), and the resized image is placed on an R canvas of pad_value pixels at the
 *     top left (normal) or centered (center, offset floor((R−r)/2));
 *  2. the resized image (or canvas) is center-cropped to H×W (offset floor((Rh−H)/2),
 *     floor((Rw−W)/2));
 *  3. each needed resized pixel is sampled bilinearly with half-pixel centers,
 *     src = (dst + 0.5)·(in/out) − 0.5 clamped to [0, in−1] (ONNX Resize, mode linear,
 *     coordinate_transformation_mode half_pixel, no antialiasing);
 *  4. channels in pixel_format order (gray = 0.299 R + 0.587 G + 0.114 B, ITU-R BT.601),
 *     x = (pixel − mean[c]) · scale[c] with pixels in 0..255.
 * Errors: CT_ERR_INPUT if the resized image is smaller than H×W (message names `name` and
 * both sizes); CT_ERR_LIMIT when out of memory. */
ct_status ct_image_preprocess(const ct_image *img, const ct_image_prep *p, int64_t c, int64_t h,
                              int64_t w, const char *name, ct_tensor **out, ct_diag *d);

#endif
