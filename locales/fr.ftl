# signupd en français : chaque mot que lit un visiteur sur les pages et dans les deux e-mails.
# Les identifiants des messages et les variables ($list, $site, ...) restent ceux de en.ftl.
#
# Registre : « vous » ; phrases courtes, sans formulations genrées.
# Glossaire :
#   sign up / signup        - s'inscrire / inscription
#   confirm                 - confirmer
#   list                    - liste
#   remove (my address)     - retirer (mon adresse) ; les données, elles, sont « supprimées »
#   preferences             - préférences / page de préférences
#   email address           - adresse e-mail
#   link                    - lien
#   subscription            - inscription (un seul mot pour le fait d'être inscrit)
#   unsubscribe             - se désinscrire (case de consentement, e-mail de bienvenue)
#   mail                    - e-mail
#   one-way hash            - empreinte irréversible

## Mail dates

date-format =
    { $day ->
        [1] 1er
       *[other] { $day }
    } { $month } { $year } à { $time } UTC
date-month-1 = janvier
date-month-2 = février
date-month-3 = mars
date-month-4 = avril
date-month-5 = mai
date-month-6 = juin
date-month-7 = juillet
date-month-8 = août
date-month-9 = septembre
date-month-10 = octobre
date-month-11 = novembre
date-month-12 = décembre

## Durations

duration-second =
    { $n ->
        [one] { $n } seconde
       *[other] { $n } secondes
    }
duration-minute =
    { $n ->
        [one] { $n } minute
       *[other] { $n } minutes
    }
duration-hour =
    { $n ->
        [one] { $n } heure
       *[other] { $n } heures
    }
duration-day =
    { $n ->
        [one] { $n } jour
       *[other] { $n } jours
    }
duration-and = { $init } et { $last }
duration-separator = {", "}
duration-per = { $n } par { $duration }

## page

page-back-to = Retour à { $site }
page-privacy = Ce que nous conservons et pendant combien de temps
page-languages = Dans d'autres langues :

## errors

errors-unavailable-title = Veuillez réessayer
errors-unavailable = L'opération n'a pas pu aboutir pour le moment. Veuillez réessayer dans une minute.
errors-not-found-title = Page introuvable
errors-not-found = Il n'y a pas de formulaire d'inscription à cette adresse.
errors-not-found-link = Aller au formulaire d'inscription
errors-incomplete-title = Ce lien est incomplet
errors-incomplete = Le lien semble tronqué ou modifié. Ouvrez-le à nouveau depuis l'e-mail, ou copiez l'adresse complète dans votre navigateur.
errors-refused-title = L'opération n'a pas pu aboutir
errors-refused = La requête n'a pas pu être lue. Veuillez revenir à la page et réessayer.
errors-timeout = La requête n'est pas arrivée à temps. Veuillez réessayer.
errors-internal = Un problème est survenu de notre côté. Veuillez réessayer dans une minute.

## signup

signup-title = Inscription : { $list }
signup-heading = Inscription à { $list }
signup-intro = Saisissez votre adresse e-mail. Nous vous enverrons un lien : votre inscription ne sera effective qu'une fois ce lien ouvert et votre confirmation donnée.
signup-email-label = Adresse e-mail
signup-honeypot-label = Laissez ce champ vide
signup-submit = S'inscrire
signup-choose-title = Inscription
signup-choose = Choisissez une liste :
signup-several-title = Inscription
signup-several-heading = Inscription
signup-lists-legend = Quelles listes souhaitez-vous recevoir ?
signup-several-consent = Envoyez-moi par e-mail les listes que j'ai cochées. Je peux me désinscrire de chacune à tout moment.
signup-no-list-ticked = Veuillez cocher au moins une liste.
signup-optional = facultatif
signup-choose-option = Choisissez
signup-field-missing = Veuillez remplir le champ « { $field } ».
signup-field-invalid = Veuillez vérifier le champ « { $field } » : choisissez l'une des options proposées, ou saisissez un texte plus court, sur une seule ligne.
signup-unreadable = Le formulaire n'a pas pu être lu. Veuillez réessayer.
signup-unsupported = Le formulaire a été envoyé dans un format que ce service ne comprend pas.
signup-too-large = Le formulaire était trop volumineux. Saisissez uniquement votre adresse e-mail.
signup-origin-not-allowed = Ce formulaire ne peut pas être utilisé depuis le site d'où il a été envoyé.
signup-invalid-email = Veuillez saisir une adresse e-mail valide, par exemple nom@example.com.
signup-consent-required = Veuillez cocher la case pour accepter de recevoir ces e-mails.
signup-unknown-list = Ce formulaire renvoie à une liste qui n'existe pas.
signup-invalid-source = Ce formulaire envoie une source que ce service n'accepte pas. Merci de le signaler au responsable du site.
signup-unknown-tag = Ce formulaire envoie une étiquette que la liste ne connaît pas. Merci de le signaler au responsable du site.
signup-domain-not-allowed = Les adresses de ce domaine ne peuvent pas servir à s'inscrire ici. Veuillez utiliser une autre adresse e-mail.
signup-rate-limited = Trop d'inscriptions depuis votre réseau. Veuillez réessayer plus tard.
signup-storage-unavailable = Votre inscription n'a pas pu être enregistrée pour le moment. Veuillez réessayer dans une minute.

## check inbox

check-inbox-title = Consultez votre boîte de réception
check-inbox-sent = Si cette adresse peut recevoir des e-mails, un message est en route. Ouvrez le lien qu'il contient et cliquez sur le bouton pour confirmer.
check-inbox-sent-for = Si cette adresse peut recevoir des e-mails, un message concernant { $list } est en route. Ouvrez le lien qu'il contient et cliquez sur le bouton pour confirmer.
check-inbox-nothing-arrived = Toujours rien après quelques minutes ? Regardez dans vos courriers indésirables (spam). Le lien n'est valable que pendant une durée limitée ; vous pouvez tout simplement vous réinscrire.
check-inbox-open-inbox = Ouvrir { $provider }

## surge

surge-title = Encore une étape
surge-unusual = Ce site connaît en ce moment un trafic inhabituel : il n'envoie donc d'e-mail de confirmation qu'aux personnes qui en font la demande.
surge-ask = Cliquez sur le bouton, et votre e-mail de confirmation part aussitôt.
surge-button = Envoyer mon e-mail de confirmation
surge-not-you = Vous n'avez rien demandé ? Fermez cette page : rien ne sera envoyé.

## confirm

confirm-title = Confirmez votre inscription : { $list }
confirm-heading = Confirmez votre inscription
confirm-intro = Vous avez demandé à recevoir { $list } par e-mail. Cliquez sur le bouton pour confirmer ; rien ne vous sera envoyé avant.
confirm-email-label = Votre adresse e-mail
confirm-email-hint = Saisissez l'adresse e-mail à laquelle vous avez reçu ce lien. Ainsi, les outils qui vérifient automatiquement les liens ne peuvent pas confirmer à votre place.
confirm-button = Confirmer l'inscription
confirm-not-you = Vous n'avez rien demandé ? Fermez simplement cette page : sans confirmation, vous ne recevrez plus rien.
confirm-wrong-address = Ce n'est pas l'adresse à laquelle ce lien a été envoyé. Veuillez la saisir à nouveau.
confirm-already-title = Inscription déjà confirmée
confirm-already = Cette adresse est déjà inscrite à { $list }. Vous n'avez rien d'autre à faire.
confirm-done-title = Votre inscription est confirmée
confirm-done = Merci. Votre adresse est désormais inscrite à { $list }.
confirm-done-any = Merci. Votre adresse est désormais inscrite.
confirm-expired-title = Ce lien a expiré
confirm-expired = Le lien de confirmation n'est plus valable : il a expiré, a été remplacé par un e-mail plus récent ou a déjà été utilisé. Vous pouvez vous réinscrire.
confirm-sign-up-again = Se réinscrire

## manage

manage-title = Retirer mon adresse
manage-intro = Votre adresse sera retirée de { $list }. Vous ne recevrez plus aucun e-mail de cette liste.
manage-intro-any = Votre adresse sera retirée de la liste pour laquelle ce lien a été envoyé. Vous ne recevrez plus aucun e-mail de cette liste.
manage-button = Retirer mon adresse
manage-removed-title = Adresse retirée
manage-removed = Votre adresse a été retirée de { $list }. Vous ne recevrez plus aucun e-mail de cette liste.
manage-removed-any = Votre adresse a été retirée. Vous ne recevrez plus aucun e-mail de cette liste.

## preferences

preferences-title = Vos préférences e-mail
preferences-intro = Cochez les listes de { $site } que vous souhaitez recevoir, décochez celles que vous ne voulez plus, puis enregistrez.
preferences-legend = Listes
preferences-pending = En attente de votre confirmation.
preferences-kept = Ce que vous nous avez indiqué lors de votre inscription :
preferences-save = Enregistrer
preferences-remove-all-heading = Retirer mon adresse
preferences-remove-all-intro = Vous pouvez aussi retirer votre adresse de toutes ces listes en une seule fois. Vous ne recevrez alors plus aucun e-mail de leur part.
preferences-remove-all = Me retirer de toutes les listes
preferences-saved-title = Préférences enregistrées
preferences-saved = Vos choix pour { $site } ont été enregistrés. Vous ne recevrez plus que les listes que vous avez cochées.
preferences-saved-any = Vos choix ont été enregistrés. Vous ne recevrez plus que les listes que vous avez cochées.
preferences-unreadable-title = Le formulaire n'a pas pu être lu
preferences-unreadable = Rien n'a été modifié. Veuillez rouvrir le lien depuis l'e-mail et enregistrer à nouveau.

## privacy

privacy-title = Confidentialité : { $list }
privacy-heading = Ce que devient votre adresse
privacy-intro = Cette page indique ce qui est conservé lorsque vous vous inscrivez à { $list }, et pendant combien de temps.
privacy-stored-heading = Ce qui est conservé
privacy-stored = Votre adresse e-mail, la liste, la version du texte de consentement que vous avez accepté ({ $version }) et ce texte lui-même, la date de votre inscription, ainsi que la date et la manière dont vous l'avez confirmée (y compris le délai écoulé depuis l'e-mail). Si le formulaire les indique, également l'emplacement du formulaire utilisé (par exemple « homepage-footer ») et les thèmes qu'il mentionne.
privacy-fields = Le formulaire demande aussi : { $fields }. Ce que vous y saisissez est conservé avec votre inscription, aussi longtemps que le reste, et affiché sur votre page de préférences.
privacy-no-ip = Votre adresse IP n'est pas conservée. Pour limiter les abus, signupd compte les inscriptions par réseau sous une empreinte irréversible du réseau, jamais sous l'adresse elle-même : { $limits }. Un compteur couvre au plus { $duration } et il est supprimé lors du nettoyage suivant.
privacy-mail-heading = Les e-mails
privacy-mail = Vous recevez un e-mail contenant un lien de confirmation et, si vous vous réinscrivez, au plus un nouvel e-mail par période de { $duration }. Rien d'autre n'est envoyé tant que vous n'avez pas confirmé.
privacy-unconfirmed = Si vous ne confirmez pas, le lien cesse de fonctionner { $duration } après le dernier e-mail, et votre adresse est supprimée lors du nettoyage suivant.
privacy-neighbourhood = Tous les réseaux d'un même voisinage (un bloc d'adresses d'un même fournisseur) sont en outre comptés ensemble : { $limits }.
privacy-never-mailed = Si l'e-mail de confirmation n'a pas encore pu être envoyé (lorsque beaucoup de personnes s'inscrivent en même temps), votre adresse est supprimée { $duration } après votre inscription, que l'e-mail soit parti ou non.
privacy-cap =
    Pour que personne ne puisse inonder votre boîte de réception en saisissant votre adresse dans de nombreux formulaires, une même adresse reçoit au plus { $n ->
        [one] { $n } e-mail
       *[other] { $n } e-mails
    } de confirmation sur 24 heures, toutes listes de ce service confondues. Pour cela, une empreinte irréversible de votre adresse est conservée avec l'heure de chacun de ces e-mails, pendant un jour.
privacy-reputation = Lorsque vous confirmez, une empreinte irréversible de votre réseau (un bloc d'adresses d'un même fournisseur) est conservée avec la date, pendant { $duration } : lorsque beaucoup de personnes s'inscrivent en même temps, les e-mails destinés aux réseaux où l'on confirme partent en premier. Rien d'autre concernant la confirmation n'est conservé avec elle.
privacy-removal-heading = Retirer votre adresse
privacy-removal = Chaque e-mail contient un lien pour retirer votre adresse. Si vous l'utilisez, votre adresse est supprimée. Seule une empreinte irréversible en est conservée, afin qu'elle ne reçoive plus jamais d'e-mail sans nouvelle confirmation — ou plus jamais du tout, si vous avez indiqué que cette inscription n'était pas la vôtre.
privacy-shared = Lorsque vous confirmez ou retirez votre adresse, les propres systèmes de l'exploitant en sont informés, avec votre adresse et ce que vous avez accepté.
privacy-contact = Des questions ? Écrivez à { $address }.

## mail

mail-greeting = Bonjour,
mail-asked = Quelqu'un (vous, nous l'espérons) a demandé à recevoir { $list } à cette adresse.
mail-how = Pour confirmer, ouvrez ce lien et cliquez sur le bouton « { $button } » :
mail-confirm-link = Confirmer mon inscription
mail-copy = Ou copiez cette adresse dans votre navigateur :
mail-until = Le lien est valable jusqu'au { $date }. Tant que vous n'avez pas confirmé, rien d'autre ne vous sera envoyé.
mail-not-you = Vous n'avez rien demandé ? Vous pouvez ignorer cet e-mail, ou retirer définitivement cette adresse :
mail-remove-for-good = Retirer cette adresse
mail-welcome = Votre adresse est désormais inscrite à { $list }. Merci de votre confirmation.
mail-preferences-any-time = Sur votre page de préférences, vous pouvez à tout moment choisir ce que vous recevez de notre part, ou vous désinscrire :
mail-preferences-link = Ouvrir ma page de préférences
mail-automated = Ce message a été envoyé automatiquement.
mail-privacy = Ce que nous conservons et pendant combien de temps :
mail-confirm-subject = Veuillez confirmer votre inscription
mail-welcome-subject = Votre inscription est confirmée

## language

language-name = Français
